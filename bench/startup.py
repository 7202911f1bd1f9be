import torch  # whole-process: start-up of the interpreter with the library loaded
