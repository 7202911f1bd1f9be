# Generates the reference block of spec/nn_functional_spec.lua with PyTorch (float64).
# Class targets are written 0-based here; the spec uses the same values plus 1.
import math, torch, warnings
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refgen
import torch.nn.functional as F
warnings.filterwarnings('ignore')
D = torch.float64
def T(v): return torch.tensor(v, dtype=D)

X = T([[0.25, -1.5, 0.75, 2.0], [-0.5, 1.25, -2.25, 0.1], [1.5, -0.3, 0.6, -1.1]])
Y = T([[0.1, -1.0, 1.2, 1.5], [0.3, 0.9, -2.0, -0.4], [1.0, 0.2, 0.1, -0.7]])
W = T([[0.2, -0.1, 0.4, 0.3], [-0.5, 0.25, 0.1, -0.2]])
B = T([0.1, -0.3])
X3 = T([[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.0, 1.0, -2.0], [0.3, -0.6, 0.9]],
        [[-1.2, 0.4, 0.8], [2.2, -0.1, 0.6], [1.1, -1.3, 0.2], [-0.4, 0.7, -0.9]]])   # 2x4x3
CW = T([0.5, 1.0, 2.0, 1.5])
TGT = torch.tensor([1, 3, 0])          # spec: {2, 4, 1}
SP_LOGITS = X3.permute(0, 2, 1).reshape(2, 3, 2, 2).permute(0, 1, 2, 3).contiguous()[:, :, :, :]  # 2x3x2x2
SP_TGT = torch.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])   # spec: +1
P = torch.sigmoid(X)
BT = T([[1.0, 0.0, 1.0, 0.0], [0.5, 1.0, 0.0, 0.25], [0.0, 1.0, 0.75, 1.0]])
PW = T([1.0, 2.0, 0.5, 3.0])
KT = T([[0.5, 0.5, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4], [0.0, 0.25, 0.25, 0.5]])
CY = T([1.0, -1.0, 1.0])

out = {}
def put(name, t): out[name] = t.detach()

put('relu', F.relu(X)); put('relu6', F.relu6(X * 4)); put('leaky_relu', F.leaky_relu(X, 0.2))
put('elu', F.elu(X, 1.5)); put('gelu', F.gelu(X)); put('gelu_tanh', F.gelu(X, approximate='tanh'))
put('silu', F.silu(X)); put('sigmoid', torch.sigmoid(X)); put('logsigmoid', F.logsigmoid(X))
put('tanh', torch.tanh(X)); put('softmax', F.softmax(X, 1)); put('log_softmax', F.log_softmax(X, 0))
put('softmin', F.softmin(X, 1)); put('softplus', F.softplus(X, beta=2, threshold=3))
put('hardtanh', F.hardtanh(X, -0.5, 1.0)); put('prelu', F.prelu(X, T([0.1, 0.2, 0.3, 0.4])))
put('prelu1', F.prelu(X, T([0.25])))
put('linear', F.linear(X, W, B)); put('linear_nobias', F.linear(X, W))
put('linear3d', F.linear(X3.permute(0, 2, 1), W, B))
BW = T([[[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], [[0.7, 0.1], [-0.2, 0.05], [0.3, -0.4]]])  # 2x3x2
put('bilinear', F.bilinear(X[:2, :3], Y[:2, :2], BW, B))
put('layer_norm', F.layer_norm(X, (4,), T([1.0, 0.5, 2.0, -1.0]), T([0.0, 0.1, 0.2, 0.3])))
put('layer_norm2', F.layer_norm(X, (3, 4), eps=1e-3))
put('group_norm', F.group_norm(X3, 2, CW, T([0.1, 0.2, 0.3, 0.4])))
rm, rv = T([0.1, -0.2, 0.3, 0.0]), T([1.0, 2.0, 0.5, 1.5])
put('batch_norm_train', F.batch_norm(X3, rm, rv, CW, T([0.1, 0.2, 0.3, 0.4]), training=True, momentum=0.2))
put('batch_norm_rm', rm); put('batch_norm_rv', rv)
rm2, rv2 = T([0.1, -0.2, 0.3, 0.0]), T([1.0, 2.0, 0.5, 1.5])
put('batch_norm_train2d', F.batch_norm(X, rm2, rv2, training=True))
put('batch_norm_rm2d', rm2); put('batch_norm_rv2d', rv2)
put('batch_norm_eval', F.batch_norm(X3, T([0.1, -0.2, 0.3, 0.0]), T([1.0, 2.0, 0.5, 1.5]), CW, None, training=False, eps=1e-3))
put('normalize', F.normalize(X)); put('normalize_p1', F.normalize(X, p=1, dim=0))
# losses
put('ce', F.cross_entropy(X, TGT)); put('ce_sum', F.cross_entropy(X, TGT, reduction='sum'))
put('ce_none', F.cross_entropy(X, TGT, reduction='none'))
put('ce_w', F.cross_entropy(X, TGT, weight=CW)); put('ce_w_none', F.cross_entropy(X, TGT, weight=CW, reduction='none'))
put('ce_ign', F.cross_entropy(X, TGT, ignore_index=3)); put('ce_ign_w', F.cross_entropy(X, TGT, weight=CW, ignore_index=3))
put('ce_ign_none', F.cross_entropy(X, TGT, ignore_index=3, reduction='none'))
put('ce_ls', F.cross_entropy(X, TGT, label_smoothing=0.2))
put('ce_ls_w_ign', F.cross_entropy(X, TGT, weight=CW, ignore_index=3, label_smoothing=0.3))
put('ce_ls_w_ign_sum', F.cross_entropy(X, TGT, weight=CW, ignore_index=3, label_smoothing=0.3, reduction='sum'))
put('ce_ls_none', F.cross_entropy(X, TGT, ignore_index=0, label_smoothing=0.3, reduction='none'))
put('ce_1d', F.cross_entropy(X[0], TGT[0]))
put('ce_spatial', F.cross_entropy(SP_LOGITS, SP_TGT)); put('ce_spatial_w', F.cross_entropy(SP_LOGITS, SP_TGT, weight=CW[:3], label_smoothing=0.1))
put('ce_spatial_none', F.cross_entropy(SP_LOGITS, SP_TGT, reduction='none'))
put('sp_logits', SP_LOGITS)
PROB = torch.softmax(Y, 1)
put('ce_prob', F.cross_entropy(X, PROB)); put('ce_prob_ls_w', F.cross_entropy(X, PROB, weight=CW, label_smoothing=0.1))
put('ce_prob_none', F.cross_entropy(X, PROB, reduction='none'))
put('nll', F.nll_loss(F.log_softmax(X, 1), TGT, weight=CW)); put('nll_none', F.nll_loss(X, TGT, reduction='none'))
put('mse', F.mse_loss(X, Y)); put('mse_none', F.mse_loss(X, Y, reduction='none')); put('mse_sum', F.mse_loss(X, Y, reduction='sum'))
put('l1', F.l1_loss(X, Y)); put('l1_none', F.l1_loss(X, Y, reduction='none'))
put('smooth_l1', F.smooth_l1_loss(X, Y, beta=0.5, reduction='none')); put('smooth_l1_mean', F.smooth_l1_loss(X, Y))
put('huber', F.huber_loss(X, Y, delta=0.5, reduction='none'))
put('bce', F.binary_cross_entropy(P, BT)); put('bce_w_none', F.binary_cross_entropy(P, BT, weight=PW, reduction='none'))
put('bce_edge', F.binary_cross_entropy(T([0.0, 1.0, 0.0, 0.5]), T([1.0, 0.0, 0.0, 1.0]), reduction='none'))
put('bcel', F.binary_cross_entropy_with_logits(X, BT))
put('bcel_pw_w', F.binary_cross_entropy_with_logits(X * 10, BT, weight=T([[1.0], [2.0], [0.5]]), pos_weight=PW, reduction='none'))
LS = F.log_softmax(X, 1)
put('kl_batchmean', F.kl_div(LS, KT, reduction='batchmean')); put('kl_none', F.kl_div(LS, KT, reduction='none'))
put('kl_mean', F.kl_div(LS, KT, reduction='mean')); put('kl_logt', F.kl_div(LS, F.log_softmax(Y, 1), reduction='sum', log_target=True))
put('cosine', F.cosine_embedding_loss(X, Y, CY, margin=0.2, reduction='none'))
put('cosine_mean', F.cosine_embedding_loss(X, -Y, -CY))
put('cosine_1d', F.cosine_embedding_loss(X[0], Y[0], torch.tensor(-1.0), margin=-0.5))
Q = X3[0, :3, :]; K = X3[1, :3, :]; V = Y[:3, :3]
put('sdpa_causal', F.scaled_dot_product_attention(Q, K, V, is_causal=True))
put('sdpa_mask', F.scaled_dot_product_attention(Q, K, V, attn_mask=torch.tensor([[True, False, True], [True, True, False], [False, True, True]]), scale=0.7))

def num(v):
    if math.isnan(v): return '0/0'
    if math.isinf(v): return 'math.huge' if v > 0 else '-math.huge'
    return '%.17g' % v
lines = ['-- Generated by spec/ref/gen_nn_functional.py with PyTorch %s; do not edit by hand.' % torch.__version__.split('+')[0],
         'return {']
for k, t in out.items():
    lines.append('  %s = {size = {%s}, %s},' % (k, ', '.join(str(s) for s in t.shape), ', '.join(num(v) for v in t.flatten().tolist())))
lines.append('}')
refgen.finish('spec/ref/nn_functional_ref.lua', lines)
