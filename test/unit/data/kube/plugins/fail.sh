#!/bin/sh
# Exec credential plugin for tests that fails like an expired SSO session.
echo "error: the SSO session has expired; run aws sso login" >&2
exit 3
