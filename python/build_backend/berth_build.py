"""A PEP 517 build backend for the berth package that needs nothing
beyond Python's standard library: `pip install ./python` works with no
network. The wheel holds berth/*.py and the metadata PEP 427 asks for;
libberth is not in it (it is found at import, see berth/_lib.py)."""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "berth"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _version():
    with open(os.path.join(HERE, "berth", "__init__.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip("\"'")
    raise RuntimeError("berth/__init__.py has no __version__")


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Python bindings of berth, an inference engine with swappable hardware backends\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\n" % (NAME, _version()))


def _sources():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            yield os.path.join(pkg, name), "%s/%s" % (NAME, name)


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = "%s-%s.dist-info" % (NAME, _version())
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata())
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    info = "%s-%s.dist-info" % (NAME, version)
    wheel = "%s-%s-py3-none-any.whl" % (NAME, version)
    files = [(arc, open(path, "rb").read()) for path, arc in _sources()]
    files.append(("%s/METADATA" % info, _metadata().encode()))
    files.append(("%s/WHEEL" % info, b"Wheel-Version: 1.0\nGenerator: berth_build\nRoot-Is-Purelib: true\n"
                                     b"Tag: py3-none-any\n"))
    record = "".join("%s,%s,%d\n" % (arc, _digest(data), len(data)) for arc, data in files)
    record += "%s/RECORD,,\n" % info
    files.append(("%s/RECORD" % info, record.encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    out = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(out, "w:gz") as t:
        for rel in ["pyproject.toml", "build_backend/berth_build.py"] + [arc for _, arc in _sources()]:
            t.add(os.path.join(HERE, rel), arcname="%s/%s" % (base, rel))
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata().encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return os.path.basename(out)
