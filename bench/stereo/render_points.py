#!/usr/bin/env python3
"""Renders a point cloud written by `stereo disparity --points` (binary PLY) to a PNG, seen from a
camera turned about the cloud's centre, each point a 2x2 splat coloured by its grey value and
shaded by depth, nearest point wins. Reads the PLY with meshio and writes the PNG with zlib alone.

Usage: render_points.py CLOUD.ply OUT.png [--yaw DEG] [--pitch DEG] [--size WxH] [--zoom F] [--max-depth Z]
"""
import argparse
import struct
import zlib

import meshio
import numpy as np


def write_png(path, rgb):
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cloud")
    ap.add_argument("out")
    ap.add_argument("--yaw", type=float, default=35.0)
    ap.add_argument("--pitch", type=float, default=-20.0)
    ap.add_argument("--size", default="800x600")
    ap.add_argument("--zoom", type=float, default=1.0)
    ap.add_argument("--max-depth", type=float, default=0.0, help="leave out points farther than this (0: keep all)")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    m = meshio.read(a.cloud)
    p = m.points.astype(np.float64)
    grey = np.asarray(m.point_data["red"])
    if grey.dtype == np.int8:  # meshio 7 reads PLY's uchar as int8
        grey = grey.view(np.uint8)
    grey = grey.astype(np.float64)
    keep = np.isfinite(p).all(axis=1) & (p[:, 2] > 0)
    if a.max_depth > 0:
        keep &= p[:, 2] <= a.max_depth
    p, grey = p[keep], grey[keep]
    centre = np.median(p, axis=0)
    yaw, pitch = np.radians(a.yaw), np.radians(a.pitch)
    ry = np.array([[np.cos(yaw), 0, np.sin(yaw)], [0, 1, 0], [-np.sin(yaw), 0, np.cos(yaw)]])
    rx = np.array([[1, 0, 0], [0, np.cos(pitch), -np.sin(pitch)], [0, np.sin(pitch), np.cos(pitch)]])
    q = (p - centre) @ (rx @ ry).T
    dist = np.percentile(np.linalg.norm(p - centre, axis=1), 90) * 2.5 / a.zoom
    z = q[:, 2] + dist
    f = 0.9 * w
    u = (f * q[:, 0] / z + w / 2).astype(np.int64)
    v = (f * q[:, 1] / z + h / 2).astype(np.int64)
    shade = 1.0 - 0.5 * (z - z.min()) / max(1e-9, np.ptp(z))
    colour = np.clip(grey * shade, 0, 255)
    img = np.full((h, w, 3), 24, dtype=np.uint8)
    depth = np.full((h, w), np.inf)
    order = np.argsort(-z)  # far to near: the nearer point is written last
    for du in (0, 1):
        for dv in (0, 1):
            uu, vv = u[order] + du, v[order] + dv
            ok = (uu >= 0) & (uu < w) & (vv >= 0) & (vv < h)
            uu, vv, zz, cc = uu[ok], vv[ok], z[order][ok], colour[order][ok]
            img[vv, uu] = np.stack([cc * 0.85, cc * 0.95, cc], axis=1).astype(np.uint8)
            depth[vv, uu] = np.minimum(depth[vv, uu], zz)
    write_png(a.out, img)
    print("%s: %d points -> %s (%dx%d)" % (a.cloud, len(p), a.out, w, h))


if __name__ == "__main__":
    main()
