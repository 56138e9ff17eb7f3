#!/bin/sh
set -eu
git diff --stat
