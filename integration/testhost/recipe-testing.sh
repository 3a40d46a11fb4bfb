# recipe-testing.sh - the second platform: Debian testing (podman 5.8, systemd 262 when this was written),
# where users of newer podman and systemd are. Sourced by testhost.sh after recipe.sh when
# TESTHOST_RECIPE=testing: everything not set here (packages, guest configuration, registry seed,
# provisioning check) is trixie's. The base image is cached under a hash of both files.
# shellcheck shell=bash

RECIPE_SUITE=testing
# debootstrap has a script for testing under that name, but not under its codename (forky): sid's is
# the same script, named explicitly so that any debootstrap that knows sid builds it.
RECIPE_SCRIPT=sid
