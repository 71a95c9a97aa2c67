"""Rules from batch h31g of issue 16 (fixtures/eval README, "Batch h31g"): a ninth blind draw from GitHub issue threads
shaped like the judged set, a long-tail project per query.

One class of its misses shows its cause in the log: a raster the input pipeline reads through GDAL (rasterio, torchgeo,
osgeo.gdal) that cannot be read. GDAL reports the block it failed to read ("IReadBlock failed at X offset N, Y offset N",
gcore/gdalrasterband.cpp GetLockedBlockRef), its GeoTIFF driver the failed decode ("TIFFReadEncodedStrip() failed.",
frmts/gtiff), libtiff the short read under it ("Read error at scanline N; got N bytes, expected N", tif_read.c
TIFFFillStrip, the module put before it by GDAL's handler); GDAL's default handler prints each as "ERROR 1: <message>"
(port/cpl_error.cpp CPLDefaultErrorHandler). A dataset file the loader cannot read: dataloader_error (parsers/errors.py
gdal_read_block_failed, gdal_tiff_read_failed, libtiff_read_error). The lines below are rebuilt from those format strings
with our values, not copied from the fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import detected, found

TILE = "/data/s2/tiles/T32TQM_2021_B04.tif"
FILL = "ERROR 1: TIFFFillStrip:Read error at scanline 1024; got 0 bytes, expected 65536"
DECODE = "ERROR 1: TIFFReadEncodedStrip() failed."
BLOCK = f"ERROR 1: {TILE}, band 1: IReadBlock failed at X offset 0, Y offset 4: TIFFReadEncodedStrip() failed."
# a training run's progress before it (Lightning's bar as torchgeo's trainers print it)
STEPS = "".join(f"Epoch 0:  {i * 10:>2d}%|██        | {i * 20}/200 [00:{i * 7:02d}<01:03,  2.84it/s, loss=0.{91 - i}3, v_num=3]\n"
                for i in range(1, 6))


@pytest.mark.parametrize(
    "line, hit",
    [
        (FILL, ("libtiff_read_error", "dataloader_error")),
        # libtiff's strip form and a handler that prints the module with a space
        ("ERROR 1: TIFFReadRawStrip1: Read error at scanline 77, strip 3; got 1200 bytes, expected 8192",
         ("libtiff_read_error", "dataloader_error")),
        (DECODE, ("gdal_tiff_read_failed", "dataloader_error")),
        ("ERROR 1: TIFFReadEncodedTile() failed.", ("gdal_tiff_read_failed", "dataloader_error")),
        (BLOCK, ("gdal_read_block_failed", "dataloader_error")),
        # GDAL 1.x's form (no message of the driver after it), and the message as a raised exception carries it
        (f"ERROR 1: {TILE}, band 2: IReadBlock failed at X offset 3, Y offset 12",
         ("gdal_read_block_failed", "dataloader_error")),
        # near misses: GDAL's warnings and a write failure are no read failure; prose about a read error
        ("Warning 1: TIFFReadDirectory:Sum of Photometric type-related color channels and ExtraSamples doesn't match "
         "SamplesPerPixel. Defining non-color channels as ExtraSamples.", None),
        ("ERROR 1: TIFFWriteEncodedStrip() failed.", None),
        ("the reader hit a read error at scanline level, retrying", None),
    ],
)  # fmt: skip
def test_gdals_raster_read_failures(line, hit):
    assert found(line) == hit


def test_the_lines_pass_the_detectors_prefilter():
    assert detected(BLOCK) == ("gdal_read_block_failed", "dataloader_error")
    assert detected(FILL) == ("libtiff_read_error", "dataloader_error")


@pytest.mark.parametrize(
    "text, category",
    [
        # the three lines GDAL prints for one unreadable block, after the run's steps and alone
        (STEPS + FILL + "\n" + DECODE + "\n" + BLOCK + "\n", "dataloader_error"),
        (FILL + "\n" + DECODE + "\n" + BLOCK + "\n", "dataloader_error"),
        # the block's line alone (a handler that keeps only the last message)
        (STEPS + BLOCK + "\n", "dataloader_error"),
        # near miss: the run's steps alone say nothing failed
        (STEPS, "running"),
    ],
)  # fmt: skip
def test_an_unreadable_raster_is_a_data_loading_failure(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary

