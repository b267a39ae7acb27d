# GenuProof - plain Makefile (C17, pkg-config, -MMD).
#
#   make            build ./genuproof (release, -O2)
#   make deps       install missing Debian packages (idempotent)
#   make test       deps + sanitizer build (ASan+UBSan) + every test
#   make demo       deps + build + ./genuproof demo
#   make install    PREFIX=/usr/local DESTDIR=
#   make fuzz       libFuzzer binaries (clang) in $(B)/fuzz/
#   make bench      benchmark programs in $(B)/bench/ (see docs/benchmarks.md)
#   make format     clang-format every source file

PREFIX ?= /usr/local
# Build directory (several checkouts or helpers side by side use their own).
B ?= build
DESTDIR ?=
CC ?= gcc
CLANG ?= clang

# Debian packages the build, the tests and the demo need.
DEB_PKGS := build-essential pkg-config libev-dev libcjson-dev libsqlite3-dev \
	libhttp-parser-dev libssl-dev libcurl4-openssl-dev libncurses-dev \
	libqrencode-dev libpng-dev libcairo2-dev fonts-dejavu-core libmaxminddb-dev \
	libcmocka-dev zbar-tools curl jq tmux sqlite3 clang libclang-rt-14-dev \
	openssl perl python3 openjdk-17-jre-headless libjemalloc-dev clang-format
# Only when no node/npm is on PATH (the machine's own Node is preferred).
NODE_PKGS := nodejs npm
BENCH_PKGS := wrk nginx-light hyperfine
# Only `make mapdata` (regenerating src/tui/mapdata_gen.c) needs these.
MAPDATA_PKGS := iso-codes

PKGS := libcjson sqlite3 libcrypto libcurl ncursesw libqrencode libpng cairo
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# libev and libhttp-parser ship no .pc file on Debian.
LIBS := $(PKG_LIBS) -lev -lhttp_parser -lmaxminddb -lm -lpthread
ifeq ($(strip $(PKG_LIBS)),)
LIBS := -lcjson -lsqlite3 -lcrypto -lcurl -lncursesw -ltinfo -lqrencode -lpng16 -lcairo \
	-lev -lhttp_parser -lmaxminddb -lm -lpthread
endif

# The product binary (not the sanitizer build, whose allocator is ASan's)
# uses jemalloc when it is installed: glibc's malloc spent a quarter of
# the verify path in chunk consolidation (docs/benchmarks.md).
REL_LIBS := $(LIBS) $(shell pkg-config --libs jemalloc 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c17 -D_GNU_SOURCE -Isrc $(PKG_CFLAGS) $(WARN) -MMD -MP
REL_CFLAGS := $(BASE_CFLAGS) -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_CFLAGS := $(BASE_CFLAGS) -O1 -g $(SAN_FLAGS) -DUNITTEST

SRC := $(shell find src -name '*.c' | sort)
LIB_SRC := $(filter-out src/main.c,$(SRC))
REL_OBJ := $(SRC:%.c=$(B)/rel/%.o)
SAN_OBJ := $(SRC:%.c=$(B)/san/%.o)
SAN_LIB_OBJ := $(LIB_SRC:%.c=$(B)/san/%.o)
REL_LIB_OBJ := $(LIB_SRC:%.c=$(B)/rel/%.o)
# Test, fuzz and bench programs link against archives: faster links, and
# each program pulls in only the objects it needs.
SAN_LIB := $(B)/san/libgenuproof.a
REL_LIB := $(B)/rel/libgenuproof.a

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_HELPERS := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/san/tests/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/san/fuzz/%)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(B)/bench/%)

.PHONY: all deps deps-node bench-deps test test-build demo install format fuzz bench clean mapdata

all: genuproof

genuproof: $(REL_OBJ)
	$(CC) $(REL_CFLAGS) -o $@ $^ $(REL_LIBS)

$(B)/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -c -o $@ $<

$(B)/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -c -o $@ $<

$(B)/san/genuproof: $(SAN_OBJ)
	$(CC) $(SAN_CFLAGS) -o $@ $^ $(LIBS)

$(SAN_LIB): $(SAN_LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(REL_LIB): $(REL_LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(B)/san/tests/%: tests/unit/%.c $(UNIT_HELPERS) $(SAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itests/unit -o $@ $< $(UNIT_HELPERS) $(SAN_LIB) $(LIBS) -lcmocka

# Fuzz targets replayed over their corpus under gcc + sanitizers.
$(B)/san/fuzz/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(SAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -o $@ $< tests/fuzz/replay_main.c $(SAN_LIB) $(LIBS)

# Real libFuzzer binaries (clang).
$(B)/fuzz/%: tests/fuzz/%.c $(LIB_SRC)
	@mkdir -p $(dir $@)
	$(CLANG) -std=c17 -D_GNU_SOURCE -Isrc $(PKG_CFLAGS) -g -O1 -DUNITTEST \
		-fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRC) $(LIBS)

$(B)/bench/%: bench/%.c $(REL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $< $(REL_LIB) $(REL_LIBS)

# LD_PRELOAD libraries of the end-to-end tests: getaddrinfo() of every
# speed (slow_dns), the disk image after a power cut (powercut).
$(B)/san/tests/%.so: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -fPIC -shared -o $@ $< -ldl -lpthread

test-build: $(B)/san/genuproof genuproof $(UNIT_BIN) $(FUZZ_REPLAY) $(B)/san/tests/slow_dns.so \
	$(B)/san/tests/powercut.so

test: deps
	$(MAKE) -j$$(nproc) test-build
	tests/run.sh

fuzz: $(FUZZ_BIN)

bench: genuproof $(BENCH_BIN)

# Backend, demo data, traffic simulator and dashboard in one process.
demo: deps
	$(MAKE) genuproof
	./genuproof demo

# Installs every missing Debian package; runs apt-get update at most once.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
		missing="$$missing $(NODE_PKGS)"; fi; \
	if [ -n "$$missing" ]; then \
		cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$$missing"; \
		if [ "$$(id -u)" = 0 ]; then echo "deps: installing$$missing"; sh -c "$$cmd" || exit 1; \
		elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo sh -c "$$cmd" || exit 1; \
		else echo "deps: missing packages; run as root:"; echo "  $$cmd"; exit 1; fi; \
	else echo "deps: all Debian packages present"; fi
	@# Node packages of the e2e clients: (re)installed whenever package.json or the
	@# lock file changed since the last install (stamp = their checksum).
	@if [ -f tests/package.json ]; then \
		want=$$(cat tests/package.json tests/package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1); \
		have=$$(cat tests/node_modules/.gp-deps-stamp 2>/dev/null); \
		if [ "$$want" != "$$have" ]; then \
			echo "deps: npm install (tests/)"; \
			if [ -f tests/package-lock.json ]; then npmcmd=ci; else npmcmd=install; fi; \
			(cd tests && npm $$npmcmd --no-audit --no-fund --loglevel=error) || exit 1; \
			echo "$$want" > tests/node_modules/.gp-deps-stamp; \
		fi; \
	fi

bench-deps:
	@missing=""; for p in $(BENCH_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; [ -z "$$missing" ] || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }

# World map tables of the dashboard (src/tui/mapdata_gen.c, committed): the
# only step that needs npm (inputs pinned in tests/tools/mapdata/).
mapdata:
	@for p in $(MAPDATA_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$p; } || exit 1; \
	done
	cd tests/tools/mapdata && npm ci --no-audit --no-fund --loglevel=error
	node tests/tools/gen_mapdata.js src/tui/mapdata_gen.c
	@if command -v clang-format >/dev/null 2>&1; then clang-format -i src/tui/mapdata_gen.c; fi

install: genuproof
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/genuproof/themes \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 genuproof $(DESTDIR)$(PREFIX)/bin/genuproof
	for t in themes/*.theme; do [ -e "$$t" ] && install -m 0644 "$$t" $(DESTDIR)$(PREFIX)/share/genuproof/themes/ || true; done
	install -m 0644 docs/genuproof.1 $(DESTDIR)$(PREFIX)/share/man/man1/genuproof.1

format:
	clang-format -i $(SRC) $(shell find src tests bench -name '*.h' -o -name '*.c' | grep -v node_modules)

clean:
	rm -rf $(B) genuproof

-include $(shell find $(B) -name '*.d' 2>/dev/null)
