"""cupy_kernels.py: CuPy array code: cuBLAS matmuls, an NVRTC-compiled ElementwiseKernel, reductions.

Clean: every temporary comes from CuPy's memory pool (reused after the first step), the
output buffer is allocated once before the loop, the sum stays on the device.
Planted: the output buffer is a raw cupy.cuda.Memory allocated every step, outside the
pool; dropping last step's buffer there frees it with cudaFree, which synchronizes the
device (expected: alloc.churn-after-warmup at the line marked PLANTED).
"""
from harness import done, need, no_cuda, parse

args = parse(__doc__.splitlines()[0], steps=50)
cp = need("cupy")
try:
    devices = cp.cuda.runtime.getDeviceCount()
except Exception as e:  # CUDARuntimeError without a driver, or without a device
    no_cuda(f"cupy {cp.__version__} finds no CUDA device ({e})")
if devices == 0:
    no_cuda(f"cupy {cp.__version__} finds no CUDA device")

N, K = 4096, 512
saxpy_tanh = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = tanh(a * x + y)",
                                  "corpus_saxpy_tanh")
rs = cp.random.RandomState(0)
a = rs.standard_normal((N, N), dtype=cp.float32) / N ** 0.5
x = rs.standard_normal((N, K), dtype=cp.float32)
bias = rs.standard_normal((N, K), dtype=cp.float32)
out = cp.empty((N, K), dtype=cp.float32)
total = cp.zeros((), dtype=cp.float32)
for step in range(args.steps):
    y = a @ x
    if args.planted:
        out = cp.ndarray((N, K), cp.float32, cp.cuda.MemoryPointer(cp.cuda.Memory(N * K * 4), 0))  # PLANTED
    saxpy_tanh(cp.float32(0.5), y, bias, out)
    x = out / (cp.abs(out).max() + 1.0)
    total += out.mean()
done("cupy_kernels", args, cupy=cp.__version__, mean=round(float(total) / args.steps, 6))
