#!/bin/sh
# Pretends to extract rows. svc reads two outputs from stdout:
#   rows  (json_field:rows)       from the last line that is a JSON object
#   batch (regex:batch=([0-9]+))  from the first match
set -eu
echo "connecting to the (imaginary) orders database"
sleep 1
echo "batch=$(date -u +%Y%m%d)"
echo '{"rows": 42, "source": "example"}'
