-- nn: modules, criteria, initialization and the functional forms, Torch7's
-- and PyTorch's names both. `local nn = require 'nn'` (also the global nn).
-- One class a file, named for it (lib/nn/Linear.lua holds nn.Linear and its
-- Torch7 alias); the builders classes share live in lib/nn/_*.lua.
local torch = require 'torch'
local nn = {}
package.loaded.nn = nn
_G.nn = nn

nn.functional = require 'nn.functional'
require 'nn.functional.conv'
require 'nn.functional.vol'
nn.F = nn.functional
nn.init = require 'nn.initialization'

require 'nn.Module'
require 'nn.Criterion'

-- the modules and criteria, by area
local CLASSES = {
  -- containers
  'Sequential', 'DistributedDataParallel', 'ModuleList', 'ModuleDict', 'Concat', 'ConcatTable', 'ParallelTable', 'Identity',
  'Parallel', 'DepthConcat', 'MapTable',
  -- Torch7's table layers
  'SplitTable', 'JoinTable', 'NarrowTable', 'SelectTable', 'FlattenTable', 'CAddTable', 'CSubTable', 'CMulTable',
  'CDivTable', 'CMaxTable', 'CMinTable', 'DotProduct', 'CosineDistance', 'PairwiseDistance', 'MixtureTable', 'MM', 'MV',
  -- layers
  'Linear', 'Bilinear', 'Embedding', 'Dropout', 'Dropout2d',
  -- shapes
  'Flatten', 'Unflatten', 'Reshape', 'View',
  -- activations
  'ReLU', 'ReLU6', 'LeakyReLU', 'ELU', 'GELU', 'SiLU', 'Sigmoid', 'Tanh', 'LogSigmoid', 'Softmax', 'LogSoftmax',
  'Softmin', 'Softplus', 'Hardtanh', 'PReLU',
  -- Torch7's simple layers
  'Abs', 'Square', 'Sqrt', 'Exp', 'Log', 'Power', 'MulConstant', 'AddConstant', 'Clamp', 'HardShrink', 'SoftShrink',
  'SoftSign', 'TanhShrink', 'Threshold', 'GatedLinearUnit', 'Contiguous',
  'Add', 'CAdd', 'Mul', 'CMul', 'Narrow', 'Select', 'Replicate', 'Transpose', 'Squeeze', 'Unsqueeze', 'Padding',
  'Max', 'Min', 'Sum', 'Mean', 'Index', 'Euclidean', 'WeightedEuclidean', 'Cosine', 'Copy', 'Constant',
  'GradientReversal', 'ZeroGrad', 'OneHot', 'Collapse', 'Normalize', 'RReLU', 'CReLU', 'SpatialSoftMax',
  'PixelShuffle', 'UpSampling', 'LookupTable',  -- Torch7 layers' fixes (t7layers)
  -- normalization
  'LayerNorm', 'GroupNorm', 'BatchNorm1d', 'BatchNorm2d', 'InstanceNorm2d',
  -- criteria
  'CrossEntropyLoss', 'NLLLoss', 'MSELoss', 'L1Loss', 'SmoothL1Loss', 'HuberLoss', 'BCELoss', 'BCEWithLogitsLoss',
  'KLDivLoss', 'CosineEmbeddingLoss',
  -- Torch7's criteria (forward gives a number)
  'MSECriterion', 'AbsCriterion', 'SmoothL1Criterion', 'DistKLDivCriterion', 'BCECriterion', 'MarginCriterion',
  'SoftMarginCriterion', 'ClassNLLCriterion', 'CrossEntropyCriterion', 'SpatialClassNLLCriterion',
  'MultiMarginCriterion', 'MultiLabelMarginCriterion', 'MultiLabelSoftMarginCriterion', 'HingeEmbeddingCriterion',
  'L1HingeEmbeddingCriterion', 'CosineEmbeddingCriterion', 'MarginRankingCriterion', 'ClassSimplexCriterion',
  'DistanceRatioCriterion', 'WeightedMSECriterion', 'SpatialAutoCropMSECriterion', 'MultiCriterion', 'ParallelCriterion',
  'ModuleCriterion', 'CriterionTable',
  -- recurrent
  'RNNCell', 'LSTMCell', 'GRUCell', 'RNN', 'LSTM', 'GRU',
  -- attention
  'MultiheadAttention', 'TransformerEncoderLayer', 'TransformerEncoder',
  -- convolution and pooling
  'Conv2d', 'Conv1d', 'ConvTranspose2d', 'MaxPool2d', 'AvgPool2d', 'MaxPool1d', 'AvgPool1d', 'AdaptiveAvgPool2d', 'AdaptiveMaxPool2d',
  'ZeroPad2d', 'ReflectionPad2d', 'ReplicationPad2d', 'CircularPad2d', 'Upsample', 'Unfold', 'Fold',
  'SpatialMaxUnpooling', 'SpatialFractionalMaxPooling', 'SpatialLPPooling', 'SpatialCrossMapLRN', 'SpatialLogSoftMax', 'FeatureLPPooling', -- Torch7 spatial pooling (t7spool)
  'SpatialConvolutionMM', 'SpatialSubSampling', 'SpatialDepthWiseConvolution', 'SpatialConvolutionLocal', 'SpatialConvolutionMap', 'SpatialFullConvolutionMap', 'SpatialSubtractiveNormalization', 'SpatialDivisiveNormalization', 'SpatialContrastiveNormalization', -- Torch7 spatial convolutions (t7sconv)
  'ZipTable', 'ZipTableOneToMany', 'CAddTensorTable', 'MaskedSelect', 'L1Cost', 'L1Penalty', 'WhiteNoise', 'Convert', 'Bottle', 'Profile', 'DontCast', 'LinearWeightNorm', 'PartialLinear', 'SparseLinear', 'IndexLinear', 'Kmeans',  -- Torch7 simple modules (t7simple)
  'Conv3d', 'ConvTranspose3d', 'MaxPool3d', 'AvgPool3d', 'MaxUnpool3d', 'FractionalMaxPool3d', 'BatchNorm3d', 'Dropout3d', 'ReplicationPad3d', 'TemporalConvolution', 'TemporalSubSampling', 'TemporalDynamicKMaxPooling', 'WeightNorm',  -- Torch7 volumetric and temporal (t7vol)
}
for _, name in ipairs(CLASSES) do require('nn.' .. name) end

nn.utils = require 'nn.utils'
require 'nn.Jacobian'
require 'nn.SparseJacobian'  -- t7simple
nn.hessian = require 'nn.hessian'   -- Torch7's diagonal Hessians, off until nn.hessian.enable() (t7layers)

torch.nn = nn
return nn
