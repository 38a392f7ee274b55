// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_rdma_parse_request() (kmod/rdma_parse.c), the RDMA server's parser
 * of a connect request's private data, built against tools/lib/kshim.h.
 * The input is the private data (rdma_cm carries at most 255 bytes of it;
 * longer inputs check the parser's own bounds).
 *
 * Besides memory safety: the status is one of the three the parser
 * rejects with, and an accepted request names a valid movie, NUL-padded,
 * that the private data held terminated, with only the known flags.
 */
#include "fuzz.h"

#include "../../kmod/rdma_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct kvod_rdma_req *req;
	char name[KVOD_NAME_MAX];
	void *pdata = fuzz_dup(data, size);
	u8 flags = 0xff, status;
	size_t n, i;

	memset(name, 0x5a, sizeof(name));
	status = kvod_rdma_parse_request(pdata, size, name, &flags);
	FUZZ_CHECK(status == KVOD_RDMA_OK || status == KVOD_RDMA_BAD_REQUEST ||
		   status == KVOD_RDMA_BAD_VERSION);
	if (status == KVOD_RDMA_OK) {
		req = pdata;
		n = strnlen(name, KVOD_NAME_MAX);
		FUZZ_CHECK(kvod_name_valid(name));
		FUZZ_CHECK(!(flags & ~KVOD_RDMA_REQ_NOTIFY));
		FUZZ_CHECK(flags == req->flags);
		FUZZ_CHECK(sizeof(*req) + n + 1 <= size);
		FUZZ_CHECK(!memcmp(req->name, name, n + 1));
		for (i = n; i < KVOD_NAME_MAX; i++)
			FUZZ_CHECK(!name[i]);
	}
	free(pdata);
	return 0;
}
