"""torchvision architectures the zoo runs whole, with wrappers only where
torchvision's own calling convention is not tensors in, tensors out.

- `RaftFlow`: RAFT-small optical flow (torchvision.models.optical_flow): the
  feature and context encoders, the all-pairs correlation pyramid, its
  lookup by bilinear grid_sample around the current flow, a ConvGRU update
  block run `updates` times, and the convex upsampling of the last flow.
- `Detections`: a torchvision detector in eval mode, whole: its transform
  (normalisation, resize), for an R-CNN the RPN (anchors, TopK of the
  objectness per level, box decoding, NMS), MultiScaleRoIAlign and the box
  head, for SSD its heads, and the postprocessing (per-class boxes, score
  threshold, TopK, batched NMS, top detections), returning the first
  image's boxes, scores and labels.
- `mvit_v2_small`: MViT-V2 (torchvision.models.video.MViT) with the V2-S
  block settings cut to one or two blocks a stage, for a short clip.
"""
import math

import torch
from torch import nn


def corr_block_class():
    from torchvision.models.optical_flow.raft import CorrBlock

    class ScaledCorrBlock(CorrBlock):
        """CorrBlock with the volume's 1/sqrt(channels) as a Python float:
        torchvision writes torch.sqrt(torch.tensor(num_channels)), which the
        TorchScript exporter (torch 1.13) traces into a Sqrt of an int64, an
        invalid ONNX graph that ONNX Runtime refuses to load. Same values."""

        def _compute_corr_volume(self, fmap1, fmap2):
            batch_size, num_channels, h, w = fmap1.shape
            corr = torch.matmul(fmap1.view(batch_size, num_channels, h * w).transpose(1, 2),
                                fmap2.view(batch_size, num_channels, h * w))
            return corr.view(batch_size, h, w, 1, h, w) / math.sqrt(int(num_channels))

    return ScaledCorrBlock


class RaftFlow(nn.Module):
    """torchvision's raft_small; returns the last of the `updates` flow
    predictions, [batch, 2, H, W]."""

    def __init__(self, updates=2):
        super().__init__()
        import torchvision
        self.raft = torchvision.models.optical_flow.raft_small(weights=None)
        self.raft.corr_block.__class__ = corr_block_class()
        self.updates = updates

    def forward(self, image1, image2):
        return self.raft(image1, image2, num_flow_updates=self.updates)[-1]


def register_roi_align_opset16():
    """torchvision before 0.15 exports roi_align by its opset-11 symbolic
    alone, which writes no coordinate_transformation_mode; in a model of
    opset 16 or later that attribute defaults to half_pixel (aligned=True),
    so an aligned=False RoIAlign (every torchvision R-CNN's) is exported with
    other values than PyTorch computes (ONNX Runtime and hone agree with each
    other, 0.5 rel L2 off PyTorch's boxes). torchvision 0.15's opset-16
    symbolic, registered where torchvision lacks it."""
    import torchvision
    if tuple(int(x) for x in torchvision.__version__.split(".")[:2]) >= (0, 15):
        return
    from torch.onnx import register_custom_op_symbolic, symbolic_helper
    from torch.onnx.symbolic_opset11 import select, squeeze

    @symbolic_helper.parse_args("v", "v", "f", "i", "i", "i", "i")
    def roi_align(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
        batch = g.op("Cast", squeeze(g, select(g, rois, 1, g.op("Constant", value_t=torch.tensor([0]))), 1),
                     to_i=torch.onnx.TensorProtoDataType.INT64)
        boxes = select(g, rois, 1, g.op("Constant", value_t=torch.tensor([1, 2, 3, 4])))
        return g.op("RoiAlign", input, boxes, batch, spatial_scale_f=spatial_scale, output_height_i=pooled_height,
                    output_width_i=pooled_width, sampling_ratio_i=max(sampling_ratio, 0),
                    coordinate_transformation_mode_s="half_pixel" if aligned else "output_half_pixel")

    register_custom_op_symbolic("torchvision::roi_align", roi_align, 16)


class Detections(nn.Module):
    """A torchvision detector (builder, no weights, no pretrained backbone)
    on one image [1, 3, H, W]: (boxes [n, 4], scores [n], labels [n]) of that
    image, n depending on the data. `train()` puts only the BatchNorm layers
    in training mode (the zoo measures their statistics on seeded batches),
    the detector itself stays in its inference path, which needs no targets.
    calibrate_images > 1: the statistics are measured on the image and
    calibrate_images - 1 more drawn from a fixed seed (SSDLite's last extra
    blocks are 1x1, where one image gives one value a channel)."""

    def __init__(self, builder, calibrate_images=1, **kw):
        super().__init__()
        import torchvision
        self.det = getattr(torchvision.models.detection, builder)(weights=None, weights_backbone=None, **kw)
        self.calibrate_images = calibrate_images
        self.calibrating = False
        register_roi_align_opset16()

    def train(self, mode=True):
        super().train(False)
        for m in self.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.train(mode)
        self.calibrating = mode
        return self

    def forward(self, pixels):
        images = [pixels[0]]
        if self.calibrating and self.calibrate_images > 1:
            more = torch.randn((self.calibrate_images - 1,) + tuple(pixels.shape[1:]),
                               generator=torch.Generator().manual_seed(0))
            images += list(more)
        out = self.det(images)[0]
        return out["boxes"], out["scores"], out["labels"]


def mvit_v2_small(spatial=64, frames=4, classes=400):
    """MViT-V2-S's blocks (pooling attention with 3x3x3 pooling of Q and of
    K/V, decomposed relative positions, residual pooling, projection after
    attention), one block at widths 96 and 768 and two at 192 and 384, for
    a clip of `frames` x `spatial`^2 (4x64x64: 2x16x16 tokens in the first
    stage, K/V pooled by 2 there; V2-S pools its 8x56x56 by 8 to 7x7)."""
    from torchvision.models.video.mvit import MSBlockConfig, MViT
    kv = max(spatial // 4 // 7, 1)  # the first stage's K/V stride
    rows = [  # heads, in, out, stride_q, stride_kv
        (1, 96, 192, [1, 1, 1], [1, kv, kv]),
        (2, 192, 192, [1, 2, 2], [1, kv // 2, kv // 2]),
        (2, 192, 384, [1, 1, 1], [1, kv // 2, kv // 2]),
        (4, 384, 384, [1, 2, 2], [1, max(kv // 4, 1), max(kv // 4, 1)]),
        (4, 384, 768, [1, 1, 1], [1, max(kv // 4, 1), max(kv // 4, 1)]),
        (8, 768, 768, [1, 2, 2], [1, 1, 1]),
    ]
    blocks = [MSBlockConfig(num_heads=h, input_channels=i, output_channels=o, kernel_q=[3, 3, 3],
                            kernel_kv=[3, 3, 3], stride_q=sq, stride_kv=skv) for h, i, o, sq, skv in rows]
    return MViT(spatial_size=(spatial, spatial), temporal_size=frames, block_setting=blocks, residual_pool=True,
                residual_with_cls_embed=False, rel_pos_embed=True, proj_after_attn=True, num_classes=classes)
