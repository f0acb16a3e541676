"""hone's PEP 517 build backend (pyproject.toml): `pip install .` builds the
`hone` package with CMake and installs it as a wheel. Standard library only,
so it needs nothing from PyPI (Debian's CMake, Ninja and pybind11 do the work):

    python3 -m venv --system-site-packages venv && venv/bin/pip install .

It builds the targets hone_python (the extension, hone._hone) and hone_cli
(the `hone` command, bundled as hone/bin/hone for `python3 -m hone`) in the
checkout's build/: where that folder is configured already (scripts/setup.sh
made it), only those two targets are built there, so an install after setup
takes seconds; otherwise build/ is configured as scripts/setup.sh does.
HONE_BUILD_DIR (or `--config-settings build-dir=DIR`) builds in another
folder; HONE_JOBS sets the parallel jobs (default: all cores).

The wheel holds python/hone/ (the package, its type stubs and py.typed), the
extension and the CLI. Both link libhone statically, so the installed package
needs only the Debian shared libraries hone builds with, not the build folder.
Its bytes depend only on its inputs: entries sorted, times fixed
(SOURCE_DATE_EPOCH, or 1980).
"""

import base64
import hashlib
import importlib.machinery
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tarfile
import time
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "python", "hone")


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    # The version has one home: CMakeLists.txt's project(hone VERSION ...).
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*hone\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("hone_build: no project(hone VERSION x.y.z) in CMakeLists.txt")
    project["version"] = m.group(1)
    return project


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
    ]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    for url_name, url in sorted(project.get("urls", {}).items()):
        lines.append(f"Project-URL: {url_name}, {url}")
    # numpy (which the arrays need) is not a Requires-Dist: pip would then
    # need an index to install it offline; Debian's python3-numpy, seen by a
    # venv made with --system-site-packages, serves instead (README).
    return "\n".join(lines) + "\n"


def _entry_points(project):
    scripts = project.get("scripts", {})
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(scripts.items()))


def _dist_info(project):
    return f"{project['name']}-{project['version']}.dist-info"


def _dist_info_files(project):
    files = {"METADATA": _metadata(project), "top_level.txt": "hone\n"}
    entry_points = _entry_points(project)
    if entry_points:
        files["entry_points.txt"] = entry_points
    return files


def _tag():
    """cp311-cp311-linux_x86_64: the running interpreter's, which the extension is built for."""
    impl = sys.implementation.name
    if impl != "cpython":
        raise RuntimeError(f"hone_build: the extension is built for CPython, not {impl}")
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{py}-{py}{sys.abiflags}-{platform}"


def _log(*words):
    print("hone_build:", *words, file=sys.stderr, flush=True)


def _run(cmd):
    _log("$", shlex.join(cmd))
    subprocess.run(cmd, check=True, cwd=ROOT)


def _build_dir(config_settings):
    d = (config_settings or {}).get("build-dir") or os.environ.get("HONE_BUILD_DIR") or "build"
    return os.path.abspath(os.path.join(ROOT, d))


def _build(build):
    """Builds hone_python and hone_cli in `build`, configuring it first if it is new."""
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        # As scripts/setup.sh configures a new build/ (see there why), for this
        # interpreter's base (a venv's own python3 may not outlive the build tree).
        python = getattr(sys, "_base_executable", None) or sys.executable
        _run([
            "cmake", "-S", ROOT, "-B", build, "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
            "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG", "-DHONE_PCH=ON", "-DHONE_UNITY=ON",
            f"-DPython3_EXECUTABLE={python}",
        ])
    jobs = os.environ.get("HONE_JOBS") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build, "-j", jobs, "--target", "hone_python", "hone_cli"])


def _built_files(build):
    """(arcname, path) of the extension and the CLI in `build`."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    ext = os.path.join(build, "python", "hone", "_hone" + suffix)
    if suffix not in importlib.machinery.EXTENSION_SUFFIXES or not os.path.isfile(ext):
        raise RuntimeError(
            f"hone_build: {build} has no {os.path.relpath(ext, build)} for this Python "
            f"({sys.executable}): that build folder's module is for the interpreter its "
            "CMakeCache.txt names (Python3_EXECUTABLE). Build for this one in a new folder: "
            "HONE_BUILD_DIR=build-py pip install .")
    cli = os.path.join(build, "hone")
    if not os.access(cli, os.X_OK):
        raise RuntimeError(f"hone_build: the hone command was not built at {cli}")
    return [("hone/_hone" + suffix, ext), ("hone/bin/hone", cli)]


def _package_files():
    """(arcname, path) of python/hone/: the Python sources, the stubs, py.typed."""
    out = []
    for name in sorted(os.listdir(PACKAGE)):
        path = os.path.join(PACKAGE, name)
        if os.path.isfile(path) and name.endswith((".py", ".pyi", ".typed")):
            out.append(("hone/" + name, path))
    return out


def _epoch():
    # Zip times start at 1980.
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _write_wheel(path, entries, dist_info):
    """entries: (arcname, bytes, executable), written in order, then RECORD."""
    date_time = time.gmtime(_epoch())[:6]
    record = []
    with zipfile.ZipFile(path, "w") as zf:
        for arcname, data, executable in entries:
            info = zipfile.ZipInfo(arcname, date_time)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            record.append(f"{arcname},{_record_hash(data)},{len(data)}")
        record_name = f"{dist_info}/RECORD"
        record.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time)
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, "\n".join(record) + "\n")


# --- PEP 517 hooks -------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    dist_info = _dist_info(project)
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    for name, text in _dist_info_files(project).items():
        with open(os.path.join(metadata_directory, dist_info, name), "w", encoding="utf-8") as f:
            f.write(text)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    build = _build_dir(config_settings)
    _build(build)
    tag = _tag()
    entries = []
    for arcname, path in _package_files() + _built_files(build):
        with open(path, "rb") as f:
            entries.append((arcname, f.read(), arcname == "hone/bin/hone"))
    dist_info = _dist_info(project)
    for name, text in sorted(_dist_info_files(project).items()):
        entries.append((f"{dist_info}/{name}", text.encode(), False))
    wheel = (f"Wheel-Version: 1.0\nGenerator: hone_build\nRoot-Is-Purelib: false\n"
             f"Tag: {tag}\n")
    entries.append((f"{dist_info}/WHEEL", wheel.encode(), False))
    name = f"{project['name']}-{project['version']}-{tag}.whl"
    _write_wheel(os.path.join(wheel_directory, name), entries, dist_info)
    _log("wrote", name)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the checkout (git ls-files) and PKG-INFO."""
    project = _project()
    base = f"{project['name']}-{project['version']}"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    mtime = _epoch()
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tf:
        def add(arcname, data, mode=0o644):
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size, info.mtime, info.mode = len(data), mtime, mode
            tf.addfile(info, io.BytesIO(data))
        for f in sorted(p for p in files if p and os.path.isfile(os.path.join(ROOT, p))):
            path = os.path.join(ROOT, f)
            with open(path, "rb") as fh:
                add(f, fh.read(), 0o755 if os.access(path, os.X_OK) else 0o644)
        add("PKG-INFO", _metadata(project).encode())
    return name
