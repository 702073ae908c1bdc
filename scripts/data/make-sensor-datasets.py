#!/usr/bin/env python3
"""Regenerate data/sensors/*.csv from real measurements shipped in the `river` package.

    python3 scripts/data/make-sensor-datasets.py            # downloads river's wheel with pip
    python3 scripts/data/make-sensor-datasets.py WHEEL.whl  # or uses a wheel you already have

Sources (see data/sensors/README.md for attribution and licences):
* river/drift/datasets/occupancy.csv — UCI Occupancy Detection (Candanedo & Feldheim 2016),
  an office room's temperature, humidity, light and CO2, one row every 16 minutes.
* river/datasets/water-flow.csv — hourly water flow (l/s) of a pipeline branch, donated by
  Tecnojest s.r.l. to river.
Only the first rows are kept so the files stay small; values are copied unchanged.
"""
import csv
import glob
import io
import pathlib
import subprocess
import sys
import tempfile
import zipfile

OUT = pathlib.Path(__file__).resolve().parents[2] / "data" / "sensors"
OCCUPANCY_ROWS = 200  # × 4 channels = 800 readings ≥ the study's 702
WATER_ROWS = 720      # 30 days, one channel


def wheel() -> pathlib.Path:
    if len(sys.argv) > 1:
        return pathlib.Path(sys.argv[1])
    d = tempfile.mkdtemp()
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", d, "river==0.26.1"], check=True)
    return pathlib.Path(glob.glob(f"{d}/river-*.whl")[0])


def main() -> None:
    z = zipfile.ZipFile(wheel())
    occ = list(csv.reader(io.StringIO(z.read("river/drift/datasets/occupancy.csv").decode())))
    assert occ[0] == ["time", "V1", "V2", "V3", "V4"], occ[0]
    with open(OUT / "office-occupancy.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        # V1..V4 are the UCI columns Temperature (°C), Humidity (%), Light (lux), CO2 (ppm).
        w.writerow(["time", "temperature [°C]", "humidity [%]", "light [lx]", "CO2 [ppm]"])
        w.writerows(occ[1 : OCCUPANCY_ROWS + 1])
    wf = list(csv.reader(io.StringIO(z.read("river/datasets/water-flow.csv").decode())))
    assert wf[0] == ["Time", "Water flow [l/s]"], wf[0]
    with open(OUT / "water-flow.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time", "water flow [l/s]"])
        w.writerows(wf[1 : WATER_ROWS + 1])
    print(f"wrote {OUT}/office-occupancy.csv ({OCCUPANCY_ROWS} rows) and water-flow.csv ({WATER_ROWS} rows)")


if __name__ == "__main__":
    main()
