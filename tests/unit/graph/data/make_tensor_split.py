#!/usr/bin/python3
"""Writes tensor_split.onnx beside this file: torch.tensor_split(x, (1, 3), dim=1)
of x [batch, 5, 4] (three pieces, MViT's pooling splits off its class token so),
each piece then unsqueezed and squeezed at axis 1 as torchvision's MViT does
(the exporter, which cannot see the pieces' dims, writes that squeeze as an If
on dim == 1), exported by torch 1.13's TorchScript exporter at opset 17: a Loop
of constant trip count building a sequence of Slices, read by SequenceAt, and
three Ifs, for passes_control_flow_test.cpp. Run with Debian's /usr/bin/python3
(python3-torch) to regenerate."""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Split(torch.nn.Module):
    def forward(self, x):
        a, b, c = torch.tensor_split(x, (1, 3), dim=1)
        a, b, c = (t.unsqueeze(1).squeeze(1) for t in (a, b, c))
        return torch.cat([c, a * 2.0, b - 1.0], dim=1)


torch.onnx.export(Split(), (torch.randn(2, 5, 4),), os.path.join(HERE, "tensor_split.onnx"), input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
