"""ddp_nccl.py: DistributedDataParallel over NCCL, its ranks started by torch.multiprocessing.spawn.

One H200 means one NCCL rank: NCCL refuses two ranks on one GPU ("Duplicate GPU
detected", ncclInvalidUsage, since NCCL 2.5), so the default is world size 1 with NCCL,
which still runs DDP's reducer, its gradient buckets and NCCL's all-reduce kernels and
threads. `--world 2` puts two ranks on the GPUs there are; where there are fewer GPUs than
ranks it switches to gloo (CUDA tensors, host-side all-reduce) and says so.
Clean: DDP, AdamW, data resident on the GPU, the running loss kept there.
Planted: torch.cuda.synchronize() every step, as a step-timing habit (expected:
sync.explicit-in-loop at the line marked PLANTED, in every rank).
"""
import os
import socket
import sys

from harness import done, need, need_torch_cuda, parse

BATCH, FEATURES, CLASSES = 256, 1024, 10
# Multicast (NVLS) off, as the GPU host asks of every NCCL job (docs of the device machines).
for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ.setdefault(k, v)


def options(p):
    p.add_argument("--world", type=int, default=1, help="ranks (default 1: NCCL takes one rank per GPU)")
    p.add_argument("--backend", default="nccl", choices=("nccl", "gloo"))


def rank_main(rank, args, port):
    torch = need_torch_cuda()
    dist = torch.distributed
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                      WORLD_SIZE=str(args.world))
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(args.backend, rank=rank, world_size=args.world)
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096),
                                torch.nn.GELU(), torch.nn.Linear(4096, CLASSES)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    xs = torch.randn(8, BATCH, FEATURES, device="cuda")
    ys = torch.randint(0, CLASSES, (8, BATCH), device="cuda")
    total = torch.zeros((), device="cuda")
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(ddp(xs[step % 8]), ys[step % 8])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.planted:
            torch.cuda.synchronize()  # PLANTED
        total += loss.detach()
    mean = total.item() / args.steps
    dist.destroy_process_group()
    if rank == 0:
        done("ddp_nccl", args, backend=args.backend, world=args.world, mean_loss=round(mean, 4))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    args = parse(__doc__.splitlines()[0], steps=40, extra=options)
    torch = need_torch_cuda()
    if args.backend == "nccl" and args.world > torch.cuda.device_count():
        print(f"ddp_nccl: {args.world} ranks on {torch.cuda.device_count()} GPU(s): NCCL takes one rank per GPU, "
              "using gloo", file=sys.stderr)
        args.backend = "gloo"
    need("torch.multiprocessing").spawn(rank_main, args=(args, free_port()), nprocs=args.world, join=True)
