# SPDX-License-Identifier: GPL-2.0
#
# kvod top-level Makefile.
#
#   make              build kmod/*.ko against KDIR, and the tools
#   make check        sparse (C=2) and checkpatch --strict, fail on any finding
#   make test         boot the Debian 6.12 kernel in QEMU and run selftests/
#   make demo         build, boot a guest, register and list a sample movie
#   make install      install the modules and tools on this machine
#   make bench        run the benchmarks (see Documentation/benchmarks.rst)

# The Debian 6.12 kernel we build and test against: the newest installed
# 6.12 amd64 headers, unless KVER or KDIR says otherwise.
KVER ?= $(shell ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | \
		sed 's|.*/linux-headers-||' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
KSRC ?= /usr/src/linux-source-6.12
export KVER KDIR KSRC

SETUP := tools/setup.sh

.PHONY: all modules tools selftests check sparse checkpatch test demo \
	install dkms-install bench clean setup

all: modules tools

setup:
	@bash $(SETUP)

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

tools:
	$(MAKE) -C tools

selftests:
	$(MAKE) -C selftests

# Every .c and .h of kernel code, and the uapi header.
KERNEL_FILES = $(sort $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h uapi/linux/*.h)))

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 W=1 modules 2>&1 | tee .sparse.log
	@! grep -E 'warning:|error:' .sparse.log

checkpatch:
	$(KSRC)/scripts/checkpatch.pl --strict --no-tree --terse \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,CAMELCASE \
		-f $(KERNEL_FILES)

check: sparse checkpatch

test: setup
	$(MAKE) all selftests
	tools/run-tests

demo: setup
	$(MAKE) all
	tools/demo

bench: setup
	$(MAKE) all selftests
	tools/run-bench

install: modules tools
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod -a $(KVER)
	$(MAKE) -C tools install

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C selftests clean
	rm -f .sparse.log
