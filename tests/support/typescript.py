"""The TypeScript client package (clients/typescript): the compilers it declares, and builds with them.

Every compiler the package's package.json lists as ``typescript`` or ``typescript-*`` (npm aliases)
builds the package twice: as a Node project with @types/node (tsconfig.json) and as one without it
(tsconfig.no-node-types.json). scripts/node-deps.sh installs them all into ./node_modules.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from bountyboard.meta.router import BASE_URL_PLACEHOLDER

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "clients" / "typescript"
NODE_MODULES = REPO_ROOT / "node_modules"
CONFIGS = {"node-types": "tsconfig.json", "no-node-types": "tsconfig.no-node-types.json"}


@dataclass(frozen=True)
class Build:
    compiler: str  # the folder under node_modules, e.g. "typescript-5.6"
    version: str
    config: str  # a key of CONFIGS

    @property
    def name(self) -> str:
        return f"ts{self.version}-{self.config}"

    @property
    def out_dir(self) -> Path:
        # Inside the package, so that the compiled tests find its dependencies (build/ is not committed).
        return PACKAGE / "build" / self.name


def declared_versions() -> dict[str, str]:
    """Compiler folder -> version, as package.json pins them ("5.9.3" or "npm:typescript@5.6.3")."""
    manifest = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    return {name: spec.removeprefix("npm:typescript@") for name, spec in manifest["devDependencies"].items()
            if name == "typescript" or name.startswith("typescript-")}


def declared_builds() -> list[Build]:
    return [Build(compiler, version, config)
            for compiler, version in declared_versions().items() for config in CONFIGS]


def compile_package(build: Build) -> list[str]:
    """Type-check (strict) and compile the library, the example and the tests; answers the files the
    program read. Fails with the compiler's messages."""
    tsc = NODE_MODULES / build.compiler / "bin" / "tsc"
    assert tsc.exists(), f"{tsc} is missing: run scripts/node-deps.sh"
    installed = json.loads((NODE_MODULES / build.compiler / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == build.version, f"{build.compiler} is {installed}, not {build.version}: run scripts/node-deps.sh"
    shutil.rmtree(build.out_dir, ignore_errors=True)  # no output left from an earlier build
    result = subprocess.run(
        ["node", str(tsc), "-p", CONFIGS[build.config], "--outDir", str(build.out_dir), "--listFiles"],
        cwd=PACKAGE, capture_output=True, text=True, timeout=300,
    )
    read = [line for line in result.stdout.splitlines() if line.startswith("/")]  # --listFiles: absolute paths
    messages = [line for line in result.stdout.splitlines() if not line.startswith("/")]
    assert result.returncode == 0, f"TypeScript {build.version} ({build.config}) does not compile the package:\n" \
                                   + "\n".join(messages) + result.stderr
    return read


@cache
def built_example() -> Path:
    """The package built as `npm run build` does (into dist/, once per test run); answers the compiled
    agent-loop example, which imports the package by its name as an installed project would."""
    assert (NODE_MODULES / ".bin" / "tsc").exists(), "run scripts/node-deps.sh to install the TypeScript packages"
    built = subprocess.run(["npm", "run", "--silent", "build"], cwd=PACKAGE, capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    return PACKAGE / "dist" / "examples" / "agent_loop.js"


def served_example_of_the_package(base_url: str) -> str:
    """What /v1/meta/examples/typescript must answer: the package's example, defaulting to ``base_url``."""
    source = (PACKAGE / "examples" / "agent_loop.ts").read_text(encoding="utf-8")
    return source.replace(BASE_URL_PLACEHOLDER, base_url)
