"""mkdocs hooks: the site draws its Mermaid diagrams with a copy of Mermaid it carries.

A page of the site must show its life-cycle diagrams where there is no
network, so nothing is loaded from elsewhere when a page is viewed.  At build
time the npm registry's `mermaid` package (pinned below) is fetched with
`npm pack` into kcache's cache folder, once per version, and its single-file
build `dist/mermaid.min.js` is copied into the site as `js/mermaid.min.js`;
`docs/js/diagrams.js` then draws every diagram block when a page loads.
Python-Markdown writes a ```mermaid fence as `<pre><code class="language-mermaid">`;
`on_page_content` turns it into the `<pre class="mermaid">` Mermaid draws.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

#: the Mermaid release the site carries (npm package `mermaid`)
MERMAID_VERSION = "12.3.0"
#: where the single-file build sits in the package
_BUNDLE = "package/dist/mermaid.min.js"
#: where the site serves it from (docs/js/diagrams.js and mkdocs.yml name it)
SITE_PATH = "js/mermaid.min.js"

_FENCE = re.compile(r'<pre><code class="language-mermaid">(.*?)</code></pre>', re.DOTALL)


def mermaid_bundle() -> Path:
    """The cached `mermaid.min.js` of MERMAID_VERSION, fetched with `npm pack` the first time."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    bundle = cache / "kcache" / "mermaid" / MERMAID_VERSION / "mermaid.min.js"
    if bundle.exists():
        return bundle
    npm = shutil.which("npm")
    if npm is None:
        raise PluginError(
            f"the docs site carries Mermaid {MERMAID_VERSION} to draw its diagrams, fetched "
            "with npm from the npm registry: npm is not on PATH (Debian: apt-get install npm)"
        )
    with tempfile.TemporaryDirectory(prefix="kcache-mermaid-") as folder:
        packed = subprocess.run(
            [npm, "pack", f"mermaid@{MERMAID_VERSION}", "--pack-destination", folder, "--silent"],
            capture_output=True,
            text=True,
            check=False,
        )
        tarball = Path(folder) / f"mermaid-{MERMAID_VERSION}.tgz"
        if packed.returncode != 0 or not tarball.exists():
            raise PluginError(
                f"npm pack mermaid@{MERMAID_VERSION} failed (exit {packed.returncode}): "
                f"{packed.stderr.strip()[-500:]}"
            )
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(_BUNDLE)
            if member is None:
                raise PluginError(f"mermaid@{MERMAID_VERSION} has no {_BUNDLE}")
            bundle.parent.mkdir(parents=True, exist_ok=True)
            partial = bundle.with_suffix(".partial")
            partial.write_bytes(member.read())
            partial.replace(bundle)
    return bundle


def on_files(files: Files, config: Any) -> Files:
    """Add the cached Mermaid build to the site's files."""
    files.append(
        File.generated(config, SITE_PATH, abs_src_path=str(mermaid_bundle()))
    )
    return files


def on_page_content(html: str, **kwargs: Any) -> str:
    """Mark each Mermaid fence as a block Mermaid draws (its text stays escaped)."""
    return _FENCE.sub(r'<pre class="mermaid">\1</pre>', html)
