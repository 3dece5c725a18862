"""results.py - read a results CSV written by common/report.hpp (stdlib only)."""
import csv
import glob
import os
import re
import sys


def read(path):
    """Returns (metadata dict, list of row dicts) from a results CSV."""
    meta, lines = {}, []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("# "):
                key, _, value = line[2:].partition(": ")
                meta[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    return meta, list(csv.DictReader(lines))


def rate_column(rows):
    """The throughput column: GB_per_s, GFLOP_per_s, ..."""
    return next(k for k in rows[0] if k.endswith("_per_s"))


def peer_column(rows):
    return next(k for k in rows[0] if k.startswith("pct_of_"))


def save_png(fig, csv_path):
    """Saves a figure beside the CSV it was drawn from: results/h200.csv -> results/h200.png."""
    fig.tight_layout()
    out = os.path.splitext(csv_path)[0] + ".png"
    fig.savefig(out, dpi=110)
    print("wrote", out)


def csv_argument():
    """The one command-line argument of a plot script: the results CSV."""
    if len(sys.argv) != 2:
        sys.exit("usage: %s RESULTS.csv" % os.path.basename(sys.argv[0]))
    return sys.argv[1]


def chapter_readme(argv, chapter_file):
    """`tables.py [--check] [CHAPTER_DIR]`: (check, README path, README text)."""
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    chapter = args[0] if args else os.path.dirname(os.path.abspath(chapter_file))
    readme_path = os.path.join(chapter, "README.md")
    return check, readme_path, open(readme_path).read()


def write_or_check(readme_path, readme, new, check, what):
    """Writes `new` over the README where it differs; with --check changes nothing and exits 1 there
    ("README: `what`: run make readme-tables")."""
    if check:
        if new != readme:
            sys.exit("%s: %s: run make readme-tables" % (readme_path, what))
        return
    if new != readme:
        open(readme_path, "w").write(new)
        print("updated", readme_path)


def update_marked_tables(argv, chapter_file, marker, table):
    """A chapter's tables.py main: `tables.py [--check] [CHAPTER_DIR]`. For every
    results/GPU.csv (not GPU_something.csv), puts table(csv_path) between
    <!-- MARKER:GPU:begin --> and <!-- MARKER:GPU:end --> in the chapter README.
    --check changes nothing and exits 1 if the README differs from what the CSVs give."""
    check, readme_path, readme = chapter_readme(argv, chapter_file)
    chapter = os.path.dirname(readme_path)
    new = readme
    for path in sorted(glob.glob(os.path.join(chapter, "results", "*.csv"))):
        gpu = os.path.splitext(os.path.basename(path))[0]
        if "_" in gpu:
            continue
        pat = re.compile(r"(<!-- %s:%s:begin -->\n)(?:.*?\n)?(<!-- %s:%s:end -->)" % (marker, gpu, marker, gpu), re.S)
        new = pat.sub(lambda m: m.group(1) + table(path) + "\n" + m.group(2), new)
    write_or_check(readme_path, readme, new, check, "the %s table is not what its CSV gives" % marker)
