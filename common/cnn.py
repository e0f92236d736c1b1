"""Image backbones for the scripts' CNN timestep encoder: Nature-DQN and IMPALA conv stacks, DrQ-v2's random-shift
augmentation, and telling an image's channel axis."""

import math

import gymnasium as gym
import torch
import torch.nn as nn
import torch.nn.functional as F


def is_image(space):
    return isinstance(space, gym.spaces.Box) and len(space.shape) == 3


def channels_last(shape, layout):
    """True for (H, W, C), False for (C, H, W); `auto` takes the smaller of the first and last axes as the channels."""
    if layout != "auto":
        return layout == "hwc"
    if shape[0] == shape[2]:
        raise ValueError(f"cannot tell the channel axis of image shape {shape}: pass --image-layout hwc or chw")
    return shape[2] < shape[0]


class NatureCNN(nn.Sequential):
    """DQN's conv stack (Mnih et al., 2015): conv -> leaky_relu per layer, no padding. Delta-orthogonal init (only
    the centre tap is non-zero, orthogonal), as the reference's NatureishCNN."""

    def __init__(self, c_in, channels, kernels, strides):
        layers = []
        for c, k, s in zip(channels, kernels, strides):
            conv = nn.Conv2d(c_in, c, k, s)
            nn.init.zeros_(conv.weight)
            nn.init.zeros_(conv.bias)
            with torch.no_grad():
                conv.weight[:, :, k // 2, k // 2] = nn.init.orthogonal_(
                    torch.empty(c, c_in), nn.init.calculate_gain("leaky_relu")
                )
            layers += [conv, nn.LeakyReLU()]
            c_in = c
        super().__init__(*layers)


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(d, d, 3, padding=1), nn.Conv2d(d, d, 3, padding=1)
        self.norm = nn.GroupNorm(4, d)  # the reference's post-residual GroupNorm (IMPALA itself has none)

    def forward(self, x):
        return self.norm(x + self.conv2(F.leaky_relu(self.conv1(F.leaky_relu(x)))))


class ImpalaCNN(nn.Sequential):
    """IMPALA's residual stack (Espeholt et al., 2018): per width d, conv3x3 -> maxpool(3, stride 2) -> 2 residual
    blocks. No activation after the last block (as the reference's IMPALAishCNN)."""

    def __init__(self, c_in, channels):
        layers = []
        for d in channels:
            layers += [nn.Conv2d(c_in, d, 3, padding=1), nn.MaxPool2d(3, 2), ResBlock(d), ResBlock(d)]
            c_in = d
        super().__init__(*layers)


def make_cnn(args, c_in):
    """--cnn, --cnn-channels, --cnn-kernels, --cnn-strides -> the backbone for images with c_in channels."""
    if args.cnn == "impala":
        channels = args.cnn_channels or (16, 32, 32)
        if any(d % 4 for d in channels):
            raise ValueError(
                f"--cnn impala: every --cnn-channels width must be divisible by 4 (GroupNorm(4)), got {channels}"
            )
        return ImpalaCNN(c_in, channels)
    channels = args.cnn_channels or (32, 64, 64)
    if not len(channels) == len(args.cnn_kernels) == len(args.cnn_strides):
        raise ValueError(
            f"--cnn nature: --cnn-channels {channels}, --cnn-kernels {args.cnn_kernels} and --cnn-strides "
            f"{args.cnn_strides} must have one entry per conv layer"
        )
    return NatureCNN(c_in, channels, args.cnn_kernels, args.cnn_strides)


class RandomShift(nn.Module):
    """DrQ-v2's augmentation (Yarats et al., 2021): replicate-pad by `pad`, crop back at a random integer offset, each
    frame its own offset, on the last `frac` of the batch's sequences. Identity in eval mode (rollouts)."""

    def __init__(self, pad, frac):
        super().__init__()
        if not 0 <= frac <= 1 or pad < 0:
            raise ValueError(f"--aug-frac must lie in [0, 1] and --aug-pad be >= 0, got {frac} and {pad}")
        self.pad, self.frac = pad, frac

    def forward(self, img):  # img: (B, L, C, H, W), any dtype -> same shape
        if not self.training or self.frac == 0 or self.pad == 0:
            return img
        B, L, C, H, W = img.shape
        split = max(min(math.ceil(B * (1 - self.frac)), B - 1), 0)  # the reference's split: >= 1 sequence shifted
        x = img[split:].flatten(0, 1)  # (N, C, H, W)
        dy, dx = torch.randint(-self.pad, self.pad + 1, (2, len(x), 1), device=img.device)
        # deviation: clamped pixel indices are the replicate padding, so no padded copy (the reference: grid_sample)
        rows = (torch.arange(H, device=img.device) + dy).clamp(0, H - 1)  # (N, H): out[i, j] = in[i + dy, j + dx]
        cols = (torch.arange(W, device=img.device) + dx).clamp(0, W - 1)  # (N, W)
        x = x[
            torch.arange(len(x), device=img.device)[:, None, None], :, rows[:, :, None], cols[:, None, :]
        ]  # (N, H, W, C)
        return torch.cat([img[:split], x.permute(0, 3, 1, 2).reshape(B - split, L, C, H, W)])
