"""Tune a torchvision model from its torch.nn.Module, save it, load it in a
new process and call it on a tensor.

    python3 examples/python/tune_module.py [OUT_DIR]

hone exports the module through torch.onnx (a dim that differs between the
samples, here the batch, becomes dynamic), tries the backends this machine
has, checks each against the reference, keeps the fastest, and returns
hone.Module: a torch.nn.Module called like the original.
"""
import os
import subprocess
import sys
import tempfile

import torch
import torchvision

import hone

out_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
os.makedirs(out_dir, exist_ok=True)
path = os.path.join(out_dir, "resnet18.hone")

net = torchvision.models.resnet18().eval()  # random weights: nothing to download
samples = [torch.rand(1, 3, 224, 224), torch.rand(2, 3, 224, 224)]
tuned = hone.tune(net, samples)
print("chosen backend:", tuned.model.backend)

x = torch.rand(1, 3, 224, 224)
with torch.no_grad():
    expected = net(x)
y = tuned(x)  # a torch.Tensor in, a torch.Tensor out
print("max |hone - torch|:", float((y - expected).abs().max()))
tuned.save(path)

# A new process loads the package (not tuned again) and calls it.
code = f"""
import torch, hone
m = hone.load({path!r})
y = m(torch.load({path + '.x.pt'!r}))
torch.save(y, {path + '.y.pt'!r})
print(type(m).__name__, tuple(y.shape))
"""
torch.save(x, path + ".x.pt")
subprocess.run([sys.executable, "-c", code], check=True)
y2 = torch.load(path + ".y.pt")
# The package's backend builds its kernels again at load, replaying the
# choices the tune made by timing (onednn's timed_choices, cuda's
# kernel_choices, saved in the package's config): the same kernels, so the
# same answer, bit for bit.
assert torch.equal(y, y2), (
    f"the loaded package gives another answer "
    f"(max difference {float((y - y2).abs().max()):.1e})")
print("loaded in a new process: same output, shape", tuple(y2.shape))
