#!/bin/sh
# Receives extract's row count as its first argument ({{ outputs.extract.rows }}).
set -eu
rows="${1:-0}"
echo "transforming $rows rows"
sleep 1
echo "transformed $rows rows"
