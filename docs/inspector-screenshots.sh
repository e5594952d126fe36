#!/usr/bin/env bash
# Regenerates the screenshots of docs/inspector.md (docs/images/inspector-*.png):
# the test that takes them in CI, told to write them. Needs chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
SAVANT_BLESS_SCREENSHOTS=1 cargo test --test it inspect_browser::screenshots_of_the_docs -- --exact
ls -l docs/images/inspector-*.png
