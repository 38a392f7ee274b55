# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of kvod's documentation ("make htmldocs"). The
# kernel-doc directive is the kernel's own (from KSRC), so the rst files
# include the DOC: blocks and kernel-doc comments of kmod/ as the
# kernel's documentation does, and each rule is written once, in the code.
import os
import sys

ksrc = os.environ.get('KSRC', '/usr/src/linux-source-6.12')
sys.path.insert(0, os.path.join(ksrc, 'Documentation', 'sphinx'))

project = 'kvod'
master_doc = 'index'
extensions = ['kerneldoc']
kerneldoc_bin = os.path.join(ksrc, 'scripts', 'kernel-doc')
kerneldoc_srctree = os.path.abspath(os.path.join(os.path.dirname(__file__),
                                                 '..'))
html_theme = 'alabaster'
