# SPDX-License-Identifier: GPL-2.0
#
# kvod top-level Makefile.
#
#   make              build kmod/kvod.ko and tsock/sch_tsock.ko against
#                     KDIR, and the tools
#   make check        sparse (C=2), checkpatch --strict and kernel-doc -Wall,
#                     fail on any finding
#   make htmldocs     Documentation/ as HTML in build/htmldocs (Sphinx, with
#                     the kernel's kernel-doc directive from KSRC)
#   make test         boot the Debian 6.12 kernel in QEMU and run selftests/
#   make debug-kernel build the debug kernel once (selftests/qemu/debug-kernel)
#   make test-debug   the whole suite on the debug kernel (KASAN, lockdep,
#                     kmemleak, UBSAN, fault injection), modules built
#                     against it in build/debug; KVOD_SHARD=I/N for the
#                     Ith of N shards of it (Documentation/testing.rst)
#   make siw          soft-iWARP (siw.ko), which Debian's kernel lacks, built
#                     out of tree from KSRC into build/siw
#   make demo         build, boot a guest, register and list a sample movie
#   make install      install the modules and tools on this machine
#   make kselftest-install
#                     selftests/kvod as a kselftest install tree in
#                     KSFT_INSTALL_PATH (default build/kselftest), to run
#                     with its run_kselftest.sh on a test host that has
#                     kvod installed (Documentation/testing.rst)
#   make bench        run the benchmarks, B=NAME for one of bench/NAME.sh
#                     (methods and results: Documentation/benchmarks.rst)
#   make fuzz         build the libFuzzer targets of selftests/fuzz with
#                     clang and run each for FUZZ_SECONDS (default 180),
#                     FUZZ_JOBS at a time (default 1), FUZZ_TARGETS="NAME..."
#                     for some only; fails on any crash, leak or sanitizer
#                     report, whose input is left in results/fuzz/NAME/
#                     (Documentation/testing.rst, "Fuzzing")

# The Debian 6.12 kernel we build and test against: the newest installed
# 6.12 amd64 headers, unless KVER or KDIR says otherwise.
KVER ?= $(shell ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | \
		sed 's|.*/linux-headers-||' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
KSRC ?= /usr/src/linux-source-6.12
export KVER KDIR KSRC

SETUP := selftests/qemu/setup.sh

.PHONY: all modules tools selftests check sparse checkpatch kerneldoc \
	htmldocs test demo \
	install dkms-install bench clean setup debug-kernel debug-modules \
	test-debug siw fuzz kselftest-install

all: modules tools

setup:
	@bash $(SETUP)

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

tools:
	$(MAKE) -C tools

selftests:
	$(MAKE) -C selftests

# drivers/infiniband/sw/siw of the kernel source that matches the headers
# (selftests/qemu/setup.sh installs both at one version), with the fixes of
# selftests/qemu/siw/*.patch, against KDIR. The patched copy is staged first and a
# file replaces its build copy only when it differs, so a second run
# rebuilds nothing.
SIW_BUILD := $(CURDIR)/build/siw
SIW_STAGE := $(CURDIR)/build/siw-src
SIW_PATCHES = $(sort $(wildcard $(CURDIR)/selftests/qemu/siw/*.patch))
siw:
	rm -rf $(SIW_STAGE)
	mkdir -p $(SIW_STAGE) $(SIW_BUILD)
	cp -p $(KSRC)/drivers/infiniband/sw/siw/Makefile \
		$(KSRC)/drivers/infiniband/sw/siw/*.[ch] $(SIW_STAGE)/
	for p in $(SIW_PATCHES); do \
		patch -s -p5 -d $(SIW_STAGE) <$$p || exit 1; \
	done
	for f in $(SIW_STAGE)/*; do \
		cmp -s $$f $(SIW_BUILD)/$${f##*/} || cp $$f $(SIW_BUILD)/ || exit 1; \
	done
	$(MAKE) -C $(KDIR) M=$(SIW_BUILD) CONFIG_RDMA_SIW=m modules

# Every .c and .h of kernel code (kvod.ko and sch_tsock.ko), and the uapi
# headers.
KERNEL_FILES = $(sort $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h \
		tsock/*.c tsock/*.h uapi/linux/*.h)))

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 W=1 modules 2>&1 | tee .sparse.log
	@! grep -E 'warning:|error:' .sparse.log

checkpatch:
	$(KSRC)/scripts/checkpatch.pl --strict --no-tree --terse \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,CAMELCASE \
		-f $(KERNEL_FILES)

# Every kernel-doc comment and DOC: block of the modules well-formed.
kerneldoc:
	@out=$$($(KSRC)/scripts/kernel-doc -none -Wall $(KERNEL_FILES) 2>&1); \
		[ -z "$$out" ] || { echo "$$out" >&2; false; }

check: sparse checkpatch kerneldoc

htmldocs:
	KSRC=$(KSRC) sphinx-build -W -q -b html Documentation build/htmldocs

# Two guests: software emulation runs a guest on one host core, so one
# guest would leave the second core idle and take the CI past its hour.
# This tier leaves some programs and transports to the debug tier
# (Documentation/testing.rst, "What each tier runs").
test: setup
	$(MAKE) all selftests siw
	KVOD_GUESTS=$${KVOD_GUESTS:-2} selftests/run-tests

# The debug tier (Documentation/testing.rst). The modules are built from
# a copy of the sources in build/debug (kvod.ko in build/debug/kmod,
# sch_tsock.ko in build/debug/tsock), so that the Debian build in kmod/
# and tsock/ stays as it is. The classful qdiscs that
# selftests/kvod/tsock_parents.sh puts tsock under, which the debug kernel
# does not build in, are built there too, from KSRC, into
# build/debug/sched. The tests find sch_tsock.ko in the tsock directory
# beside KVOD_KMOD_DIR (selftests/lib/ktap.sh, kmod_path()).
DEBUG_BUILD := $(CURDIR)/build/debug
DEBUG_SCHED := hfsc qfq drr ets htb

debug-kernel: setup
	@selftests/qemu/debug-kernel >/dev/null

debug-modules: debug-kernel
	rm -rf $(DEBUG_BUILD)
	mkdir -p $(DEBUG_BUILD)/kmod $(DEBUG_BUILD)/tsock $(DEBUG_BUILD)/sched
	cp Kbuild $(DEBUG_BUILD)/
	cp -r uapi $(DEBUG_BUILD)/
	cp kmod/Kbuild kmod/*.c kmod/*.h $(DEBUG_BUILD)/kmod/
	cp tsock/Kbuild tsock/*.c $(DEBUG_BUILD)/tsock/
	$(MAKE) -C $$(selftests/qemu/debug-kernel --print) M=$(DEBUG_BUILD) W=1 modules
	cp $(DEBUG_SCHED:%=$(KSRC)/net/sched/sch_%.c) $(DEBUG_BUILD)/sched/
	echo 'obj-m := $(DEBUG_SCHED:%=sch_%.o)' >$(DEBUG_BUILD)/sched/Kbuild
	$(MAKE) -C $$(selftests/qemu/debug-kernel --print) M=$(DEBUG_BUILD)/sched modules

test-debug: setup
	$(MAKE) tools selftests debug-modules
	KVOD_KERNEL=$$(selftests/qemu/debug-kernel --print) \
	KVOD_KMOD_DIR=$(DEBUG_BUILD)/kmod \
	KVOD_TIER=debug \
	KVOD_TIMEOUT_SCALE=$${KVOD_TIMEOUT_SCALE:-4} \
	KVOD_BOOT_TIMEOUT=$${KVOD_BOOT_TIMEOUT:-1500} \
	KVOD_VM_TIMEOUT=$${KVOD_VM_TIMEOUT:-28800} \
	KVOD_GUESTS=$${KVOD_GUESTS:-2} \
	KVOD_RESULTS=$${KVOD_RESULTS:-$(CURDIR)/results/debug} \
	selftests/run-tests

demo: setup
	$(MAKE) all siw
	selftests/qemu/demo

bench: setup
	$(MAKE) all selftests
	bench/run-bench $(B)

FUZZ_SECONDS ?= 180
FUZZ_JOBS ?= 1

fuzz: setup
	$(MAKE) -C selftests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS) \
		FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_TARGETS="$(FUZZ_TARGETS)"

install: modules tools
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod -a $(KVER)
	$(MAKE) -C tools install

KSFT_INSTALL_PATH ?= $(CURDIR)/build/kselftest

kselftest-install:
	$(MAKE) -C selftests install INSTALL_PATH=$(abspath $(KSFT_INSTALL_PATH))

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/fuzz clean
	rm -rf .sparse.log build
