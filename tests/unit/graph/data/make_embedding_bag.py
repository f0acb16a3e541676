#!/usr/bin/python3
"""Writes embedding_bag_{sum,mean,max}.onnx beside this file: nn.EmbeddingBag(20, 4)
over 2-D ids [batch, 5] exported by torch 1.13's TorchScript exporter at opset 17
(a Loop over the bags), for passes_embedding_bag_test.cpp. Seeded; run with
Debian's /usr/bin/python3 (python3-torch) to regenerate."""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
for mode in ("sum", "mean", "max"):
    torch.manual_seed(7)
    bag = torch.nn.EmbeddingBag(20, 4, mode=mode)
    ids = torch.randint(0, 20, (3, 5))
    torch.onnx.export(bag, (ids,), os.path.join(HERE, "embedding_bag_%s.onnx" % mode), input_names=["ids"],
                      output_names=["y"], dynamic_axes={"ids": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
