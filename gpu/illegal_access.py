# illegal_access.py: a PyTorch program whose custom kernel (compiled at run time by
# CuPy's NVRTC) writes through a bad pointer: the next sync fails with 700
# (an illegal memory access). cudashim must leave a flight record naming it.
import cupy
import torch

x = torch.ones(1024, device="cuda")
y = (x * 2).sum()
print("before:", float(y))
bad = cupy.RawKernel(r'extern "C" __global__ void bad(float* p) { p[threadIdx.x + (1ull << 40)] = 1.0f; }', "bad")
bad((1,), (32,), (cupy.uint64(x.data_ptr()),))
torch.cuda.synchronize()  # raises: CUDA error: an illegal memory access was encountered
