"""jax_mlp.py: a jit-compiled JAX MLP trained with plain SGD (XLA's own allocator and transfers).

Clean: numpy batches handed to the jitted step (XLA copies them to the GPU), the loss
summed on the device and read once at the end, so the host runs ahead of the GPU.
Planted: the loss is fetched with jax.device_get every step, a scalar read-back that stops
that overlap (expected: sync.scalar-readback at the line marked PLANTED).
"""
import os

from harness import done, need, no_cuda, parse

# XLA takes 75 % of the GPU at start by default; a third lets check.py --jobs 2 run two side by side.
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.3")

# 1000 steps, about 1.5 s of loop on the H200: the planted read-back is found by sampling the main
# thread while XLA's thread reads back (shim/wait_sampler.h), at most one sample per 4 ms, and a
# loop must be 5 % of the run's loop window (sync.loop_share), which XLA's compile also spans.
args = parse(__doc__.splitlines()[0], steps=1000)
jax = need("jax")
np = need("numpy")
try:
    backend = jax.default_backend()
except RuntimeError as e:
    no_cuda(f"jax has no backend ({e})")
if backend != "gpu":
    no_cuda(f"jax {jax.__version__} runs on {backend}, not on a GPU (is jax-cuda13-plugin installed?)")
jnp = jax.numpy

BATCH, FEATURES, HIDDEN, CLASSES, LR = 512, 1024, 4096, 10, 1e-2


def init(key):
    sizes = [(FEATURES, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, CLASSES)]
    keys = jax.random.split(key, len(sizes))
    return [(jax.random.normal(k, s, jnp.float32) * (1.0 / np.sqrt(s[0])), jnp.zeros(s[1], jnp.float32))
            for k, s in zip(keys, sizes)]


def loss_fn(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jax.nn.gelu(h @ w + b)
    w, b = params[-1]
    logp = jax.nn.log_softmax(h @ w + b)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss


rng = np.random.default_rng(0)
xs = [rng.standard_normal((BATCH, FEATURES), dtype=np.float32) for _ in range(8)]
ys = [rng.integers(0, CLASSES, BATCH).astype(np.int32) for _ in range(8)]
params = init(jax.random.PRNGKey(0))
total, seen = jnp.zeros(()), []
for step in range(args.steps):
    params, loss = train_step(params, xs[step % 8], ys[step % 8])
    if args.planted:
        seen.append(jax.device_get(loss))  # PLANTED
    else:
        total = total + loss
mean = float(np.mean(seen)) if args.planted else float(total) / args.steps
done("jax_mlp", args, jax=jax.__version__, device=jax.devices()[0].device_kind, mean_loss=round(mean, 4))
