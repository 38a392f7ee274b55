# SPDX-License-Identifier: GPL-2.0
#
# The preamble of the rdma_*.sh tests that run over Soft-RoCE (sourced;
# not a test): ktap.sh and rxe.sh, the guest check, and $RDMA_TMP, which
# rxe.sh's movie_add and the tests keep their files in. On exit it runs
# rdma_on_exit, which a test may redefine to undo more (tracing, client
# processes), then removes $RDMA_TMP.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "${BASH_SOURCE[0]}")/ktap.sh"
# shellcheck source=selftests/lib/rxe.sh
. "$(dirname "${BASH_SOURCE[0]}")/rxe.sh"
kvod_require_guest
rdma_require_transport

RDMA_TMP=$(mktemp -d)

rdma_on_exit() {
	:
}

rdma_exit() {
	rdma_on_exit
	rm -rf "$RDMA_TMP"
}
trap rdma_exit EXIT
