# make        builds bin/mcpdiff and doc/tags (what lazy.nvim's `build = "make"` runs);
#             without Go, on a release tag, downloads the released bin/mcpdiff instead
# make test   the whole suite: lint (Go and Lua), unit and end-to-end tests with -race
#             on Neovim 0.7.2 and 0.10, the portable paths, a short run of every fuzz
#             target; it ends with the skipped tests and the 20 slowest
# make check  the inner loop, under a minute: lint and every unit test with -race,
#             needing neither Neovim nor an agent CLI
# make test-nvim, test-agents, test-serve, test-install  one end-to-end suite group
#             (CONTRIBUTING.md says which to run when)
# make lint   gofmt, go vet, staticcheck, deadcode, luacheck, stylua, actionlint
# make bench  benchmarks, side by side with the peers they name; their tables go into
#             docs/benchmarks.md
# make cross  builds and vets for macOS, Windows, FreeBSD and Linux/arm64 (part of make test)
# make release  bin/mcpdiff for Linux amd64 and each of those systems, into dist/, with
#             SHA256SUMS (also release/SHA256SUMS, which a release commits)
# make screenshots  the README's pictures, doc/images/*.png: Neovim 0.10's terminal UI
#             in tmux, drawn by headless Chromium (SCREENSHOTS=DIR writes them elsewhere)

GO      ?= go
BIN     := bin/mcpdiff
RACEBIN := bin/mcpdiff-race
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
SOURCES := $(shell find . -name '*.go' -not -path './.git/*' 2>/dev/null) go.mod go.sum lua/mcpdiff/version.lua
FUZZTIME ?= 4s
# make test's share of fuzzing: each target for this long (make fuzz FUZZTIME=1m to
# fuzz for longer).
TESTFUZZTIME := 2s

.PHONY: all test check unit test-nvim test-agents test-serve test-install fuzz bench screenshots clean lint cross portable release

# doc/tags first: `:help mcpdiff` works even when the Go build cannot run.
all: doc/tags $(BIN)

# Without cgo the binary is static (the only network it uses is 127.0.0.1, for which
# Go's own resolver is enough): no dynamic loader at every start (a hook runs on every
# edit, the bridge with every Neovim), and no libc pages in `mcpdiff nvim`'s memory.
ifneq ($(shell command -v $(GO) 2>/dev/null),)
$(BIN): $(SOURCES)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.commit=$(COMMIT)" -o $(BIN) ./cmd/mcpdiff
else
# Without Go: on a release tag, the released binary for this system, checked against
# the tag's release/SHA256SUMS (scripts/install-release); anywhere else, or when that
# fails, its one line is make's $(error), with no line of make's own beside it.
$(BIN): $(SOURCES)
	$(eval INSTALLED := $(shell GO='$(GO)' scripts/install-release $(BIN) && echo ok))
	$(if $(filter ok,$(lastword $(INSTALLED))),$(info $(filter-out ok,$(INSTALLED))),$(error $(INSTALLED)))
endif

# The end-to-end suites run the -race build: its data races fail the suite that
# started it (internal/testenv collects them through GORACE's log_path).
$(RACEBIN): $(SOURCES)
	$(GO) build -race -ldflags "-X main.commit=$(COMMIT)" -o $(RACEBIN) ./cmd/mcpdiff

# How the tests run: through bin/testsummary (scripts/testsummary), which shows
# go test's events as plain go test does and keeps them in bin/testlogs, for the
# summary that ends make test. $(call gotest,NAME,ARGS) runs go test -json ARGS.
TESTSUMMARY := bin/testsummary
TESTLOGS    := bin/testlogs
gotest = $(TESTSUMMARY) -log $(TESTLOGS)/$(1).json $(GO) test -json $(2)
$(TESTSUMMARY): scripts/testsummary/main.go
	$(GO) build -o $@ ./scripts/testsummary

# The unit tests: every package outside tests/. The few that drive a Neovim use one
# when they find it, and skip otherwise (make test requires it).
UNIT := . ./bridge/... ./cmd/... ./internal/... ./nvim/... ./scripts/...

# The end-to-end suites run the -race build and every listed Neovim: Debian's nvim
# (0.7.2) and 0.10 from scripts/nvim-0.10 (cached in ~/.cache/nvim-0.10 after its
# first run). MCPDIFF_REQUIRE_TOOLS=1: a test without a program it needs (a Neovim,
# an agent CLI, tmux, strace) fails, naming it, rather than skips.
E2EENV = MCPDIFF_BIN=$(CURDIR)/$(RACEBIN) MCPDIFF_REQUIRE_TOOLS=1 \
	MCPDIFF_NVIMS="$$(command -v nvim):$$(scripts/nvim-0.10)"
# Independent tests run in parallel (each in its own temp folders, home and ports),
# several suites at once: most of their time is spent waiting on other processes.
# RUN=REGEXP runs only the tests it matches (go test -run), for the inner loop.
E2EFLAGS = -race -count=1 -timeout 30m -p 4 -parallel 4 $(if $(RUN),-run '$(RUN)')
# Not tests but generators, run by their own targets: the README's pictures (make
# screenshots) and the hook inputs recorded from the real Claude Code (CONTRIBUTING.md).
GENERATORS := ^(TestScreenshots|TestCaptureHookFixtures)$$

check: lint unit
unit: $(TESTSUMMARY)
	$(call gotest,unit,-race -count=1 $(if $(RUN),-run '$(RUN)') $(UNIT))

test-nvim: $(RACEBIN) $(TESTSUMMARY)
	$(E2EENV) $(call gotest,nvim,$(E2EFLAGS) ./tests/nvim/)
test-agents: $(RACEBIN) $(TESTSUMMARY)
	$(E2EENV) $(call gotest,agents,$(E2EFLAGS) ./tests/claude/ ./tests/clients/ ./tests/hooks/)
test-serve: $(RACEBIN) $(TESTSUMMARY)
	$(E2EENV) $(call gotest,serve,$(E2EFLAGS) ./tests/serve/)
test-install: all $(RACEBIN) $(TESTSUMMARY)
	$(E2EENV) $(call gotest,install,$(E2EFLAGS) ./tests/install/ ./tests/readme/)

# Everything: lint, the other systems, every unit and end-to-end test in one run of
# go test (the suites overlap), the portable paths, the 50 MB frame, fuzzing; then
# what was skipped and the slowest tests, so that the next slow one is seen the day
# it appears.
test: all $(RACEBIN) $(TESTSUMMARY) lint cross
	rm -rf $(TESTLOGS)
	$(E2EENV) $(call gotest,all,$(E2EFLAGS) -skip '$(GENERATORS)' $(UNIT) ./tests/...)
	$(MAKE) portable
	@# A 50 MB frame takes minutes under -race (JSON decoding); without it, seconds.
	$(call gotest,frame,-count=1 -run 'FiftyMegabyte' ./bridge/ide/)
	$(MAKE) fuzz FUZZTIME=$(TESTFUZZTIME)
	@$(TESTSUMMARY) -slowest 20 $(TESTLOGS)/*.json

# The systems a release is built for besides linux/amd64; .ci/run runs on
# linux/amd64 only (the workflows run macOS and Windows on GitHub's runners), so
# `cross` builds the binary and vets every package (tests included) for the others.
TARGETS := darwin/arm64 darwin/amd64 linux/arm64 windows/amd64 freebsd/amd64
cross:
	@set -e; for t in $(TARGETS); do \
		echo "cross $$t"; \
		CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build -o /dev/null ./cmd/mcpdiff; \
		CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./...; \
	done

# The code paths of systems without Linux's extras (no renameat2, hence no spare
# files; no inode numbers, hence no cached hashes; no /proc; no writev), run here
# with the tag portable: the packages that have such variants, and the end-to-end
# tests of decisions under faults (kills at every step and at random, a full disk,
# kill -9 during edits), whose writes go through them. The rest of tests/serve takes
# the same paths either way: it runs once, in make test.
PORTABLEBIN := bin/mcpdiff-portable
PORTABLEPKGS := ./internal/history/ ./internal/workspace/ ./bridge/filetools/ ./cmd/mcpdiff/
PORTABLETESTS := ^(TestDecision|TestKillNineDuringEdits)
$(PORTABLEBIN): $(SOURCES)
	$(GO) build -race -tags portable -ldflags "-X main.commit=$(COMMIT)" -o $(PORTABLEBIN) ./cmd/mcpdiff
portable: $(PORTABLEBIN) $(TESTSUMMARY)
	$(call gotest,portable-unit,-race -count=1 -tags portable $(PORTABLEPKGS))
	MCPDIFF_BIN=$(CURDIR)/$(PORTABLEBIN) MCPDIFF_REQUIRE_TOOLS=1 $(call gotest,portable-serve,$(E2EFLAGS) \
		-tags portable -run '$(PORTABLETESTS)' ./tests/serve/)

# Release binaries: static, one per system, named mcpdiff-VERSION-OS-ARCH (.exe on
# Windows), the same bytes on every machine, with their SHA-256 sums in dist/ and in
# release/SHA256SUMS, which a release commits before its tag (scripts/release).
release:
	scripts/release linux/amd64 $(TARGETS)

# Every fuzz target for FUZZTIME; scripts/fuzz tells a finding from the fuzzing
# engine's own failures.
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz

# Lint: each tool must report nothing. .ci/lint-tools (which .ci/run runs) installs
# them at pinned versions (staticcheck, deadcode and actionlint into Go's bin folder,
# stylua into ~/.cache/mcpdiff); actionlint checks the workflows, and their shell
# steps with shellcheck when it is on PATH (.ci/run installs Debian's).
# internal/testenv is only for tests, so deadcode without -test finds all of it
# unreachable: that part of its report is left out (deadcode -test still names a
# helper no test uses). tests/bench is a module of its own (the peers it measures
# against stay out of go.mod), linted in its folder.
GOBINDIR := $(shell $(GO) env GOPATH 2>/dev/null)/bin
STYLUA   ?= $(firstword $(wildcard $(HOME)/.cache/mcpdiff/stylua/node_modules/.bin/stylua) stylua)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt: not formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd tests/bench && $(GO) vet ./...
	$(GOBINDIR)/staticcheck ./...
	cd tests/bench && $(GOBINDIR)/staticcheck ./...
	@out=$$($(GOBINDIR)/deadcode ./... | grep -v '^internal/testenv/'; $(GOBINDIR)/deadcode -test ./...; \
		cd tests/bench && $(GOBINDIR)/deadcode -test ./... | grep -v '^\.\./'); \
		if [ -n "$$out" ]; then echo "deadcode:"; echo "$$out"; exit 1; fi
	luacheck -q lua plugin
	$(STYLUA) --check lua plugin
	$(GOBINDIR)/actionlint

# The help tags, as Neovim's :helptags writes them (lazy.nvim writes the same file);
# git-ignored, so that a plugin manager's clone stays clean. A folder that cannot be
# written is one line, as bin/mcpdiff's failures are.
doc/tags: doc/*.txt scripts/helptags.awk
	$(if $(shell test -w doc || echo no),$(error mcpdiff: doc/tags not written: cannot write in $(CURDIR)/doc (a read-only plugin folder?): make it writable, then run make again))
	@LC_ALL=C awk -f scripts/helptags.awk doc/*.txt | LC_ALL=C sort > $@.tmp && mv $@.tmp $@

# Each step's output is kept in bin/bench.log too; once every step has run, the
# tables in it replace the last run's in docs/benchmarks.md (scripts/bench-tables).
BENCHLOG := bin/bench.log
bench: $(BIN)
	: > $(BENCHLOG)
	bash -o pipefail -c 'scripts/bench-ts $(CURDIR)/$(BIN) | tee -a $(BENCHLOG)'
	bash -o pipefail -c 'MCPDIFF_BIN=$(CURDIR)/$(BIN) MCPDIFF_NVIMS="$$(scripts/nvim-0.10)" \
		$(GO) test -run "^$$" -bench . -benchtime 1x -timeout 60m ./bridge/filetools/ ./internal/udiff/ | tee -a $(BENCHLOG)'
	bash -o pipefail -c 'cd tests/bench && MCPDIFF_BIN=$(CURDIR)/$(BIN) MCPDIFF_NVIMS="$$(../../scripts/nvim-0.10)" \
		$(GO) test -run "^$$" -bench . -benchtime 1x -timeout 60m ./... | tee -a $(CURDIR)/$(BENCHLOG)'
	scripts/bench-tables $(BENCHLOG) docs/benchmarks.md

# $MCPDIFF_NVIM, when set, is the Neovim (0.10 or newer) to run instead.
SCREENSHOTS ?= doc/images
screenshots: $(BIN)
	MCPDIFF_BIN=$(CURDIR)/$(BIN) MCPDIFF_NVIM="$${MCPDIFF_NVIM:-$$(scripts/nvim-0.10)}" \
		MCPDIFF_SCREENSHOTS=$(abspath $(SCREENSHOTS)) \
		$(GO) test -count=1 -run '^TestScreenshots$$' -v ./tests/screenshots/

clean:
	rm -rf bin dist doc/tags
