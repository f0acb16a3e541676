"""The host link's copy rates on the GPU machine, through PyTorch: host to device from pageable
and from pinned memory, device to host into pinned memory; a batch-32 image input's bytes
(19.3 MB) and a larger block; median of 30 after warm-up, CUDA events."""
import torch

def med(f, n=30):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(5): f()
    t = []
    for _ in range(n):
        torch.cuda.synchronize(); s.record(); f(); e.record(); e.synchronize(); t.append(s.elapsed_time(e))
    t.sort(); return t[len(t) // 2]

for mb in (19.3, 9.65, 128.0):
    n = int(mb * 1e6 / 4)
    page = torch.randn(n); pin = page.pin_memory(); dev = torch.empty(n, device="cuda")
    hp = med(lambda: dev.copy_(page)); hq = med(lambda: dev.copy_(pin, non_blocking=True))
    dq = med(lambda: pin.copy_(dev, non_blocking=True))
    print(f"{mb:7.2f} MB  H2D pageable {hp:.3f} ms ({mb/hp:.1f} GB/s)  H2D pinned {hq:.3f} ms "
          f"({mb/hq:.1f} GB/s)  D2H pinned {dq:.3f} ms ({mb/dq:.1f} GB/s)")

# The CPU side of a staged copy: 19.3 MB from ordinary into page-locked memory on T threads.
import time, threading
import numpy as np
n = int(19.3e6 / 4)
src = np.random.rand(n).astype(np.float32); dst = torch.empty(n).pin_memory().numpy()
for T in (1, 2, 4, 8, 16):
    parts = np.array_split(np.arange(n), T); bounds = [(p[0], p[-1] + 1) for p in parts]
    ts = []
    for rep in range(12):
        th = [threading.Thread(target=lambda b=b: np.copyto(dst[b[0]:b[1]], src[b[0]:b[1]])) for b in bounds]
        t0 = time.perf_counter(); [t.start() for t in th]; [t.join() for t in th]; ts.append(time.perf_counter() - t0)
    ts.sort(); print(f"memcpy 19.3 MB into pinned, {T:2d} threads: {ts[len(ts)//2]*1e3:.3f} ms ({19.3/(ts[len(ts)//2]*1e3):.1f} GB/s)")
