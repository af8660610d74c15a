# vigil — build, test, bench, fuzz, demo.  See README.md.
CC      ?= gcc
# libcurl is loaded with dlopen on first use (src/util/curlso.c).
# libmicrohttpd too, when an HTTP server starts (src/util/mhdso.c).
PKGS    := jansson sqlite3 munge zlib yaml-0.1
CFLAGS  ?= -O2 -g
# libpq too, when a store names a PostgreSQL database (src/util/pqso.c): its header only at build time.
CFLAGS  += -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -MMD -MP $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljansson -lsqlite3 -lmunge -lz -lyaml) -ldl -lpthread -lm
# `make V=1` shows the full commands.
Q       := $(if $(V),,@)
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC := $(sort $(wildcard src/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=build/obj/%.o)
SAN_OBJ := $(LIB_SRC:%.c=build/san/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
TEST_HELPER_SRC := $(sort $(wildcard tests/unit/helpers/*.c))
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=build/fuzz/%)

.PHONY: all check unit integration bench fuzz demo install deb image clean cuda
FAKE_LIBS := build/tests/libnvidia-ml.so.1 build/tests/libamd_smi.so.26 build/tests/librocm_smi64.so.7 \
             build/tests/libibverbs.so.1
all: build/vigil $(FAKE_LIBS)

build/vigil: build/obj/src/main.o build/libvigil.a
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/libvigil.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

build/obj/%.o: %.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

build/san/%.o: %.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC/SAN  $<")
	$(Q)$(CC) $(CFLAGS) $(SAN) -c -o $@ $<

build/libvigil-san.a: $(SAN_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# The sanitized vigil binary the integration tests run.
build/vigil-san: build/san/src/main.o build/libvigil-san.a
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

# (-lmicrohttpd: test_sender runs a server of its own with it)
build/tests/%: tests/unit/%.c build/libvigil-san.a $(TEST_HELPER_SRC)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) $(SAN) -Itests/unit -o $@ $< $(TEST_HELPER_SRC) build/libvigil-san.a $(LDLIBS) -lmicrohttpd -lcmocka

# The fake NVML library: the real dlopen path runs against it in tests and the lab.
build/tests/libnvidia-ml.so.1: tests/fake_nvml/fake_nvml.c tests/fake_state/fake_state.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $< -lpthread

# The fake AMD SMI library, and the same file as a fake ROCm SMI: the AMD layers' dlopen paths.
build/tests/libamd_smi.so.26: tests/fake_amdsmi/fake_amdsmi.c tests/fake_state/fake_state.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libamd_smi.so.26 -o $@ $<
build/tests/librocm_smi64.so.7: tests/fake_amdsmi/fake_amdsmi.c tests/fake_state/fake_state.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,librocm_smi64.so.7 -o $@ $<

# The fake verbs library: the RDMA probe's real dlopen path runs against it (devices that can hang).
build/tests/libibverbs.so.1: tests/fake_verbs/fake_verbs.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libibverbs.so.1 -o $@ $<

# vigil's own GPU tests (docs/burnin.md): only where CUDA is installed, so not
# part of `all`; `vigil burnin` finds build/vigil-gpu once it is on PATH.
NVCC    ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
cuda: build/vigil-gpu
build/vigil-gpu: src/burnin/cuda/vigil-gpu.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -o $@ $<
# The HTTP load and attack client the serve tests and the bench use.
build/tests/httpload: tests/tools/httpload.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lmunge -lgnutls -lpthread
# The unix-socket forwarder that cuts a controller's database connection silently.
build/tests/sockcut: tests/tools/sockcut.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<


# The Kubernetes API test double (tests/k8s/): kubectl and vigil's k8s backend run against it.
KAPI_SRC := $(sort $(wildcard tests/k8s/*.c))
build/tests/kapi: $(KAPI_SRC) tests/k8s/kapi.h
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $(KAPI_SRC) -ljansson -lmicrohttpd -lgnutls -lpthread -lz

# The Redfish service double (tests/redfish/): curl and `vigil bmc --redfish` run against it.
build/tests/redfish: tests/redfish/redfish.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -o $@ $< -ljansson -lmicrohttpd -lpthread

unit: $(UNIT_BIN) $(FAKE_LIBS) build/vigil build/vigil-san build/tests/kapi build/tests/redfish
integration: build/vigil build/vigil-san $(FAKE_LIBS) build/tests/kapi build/tests/redfish build/tests/httpload build/tests/sockcut

# check, bench and demo install the Debian packages they need first (as root).
check:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j$$(nproc) unit integration
	@tests/run

bench:
	@tests/deps.sh
	@$(MAKE) --no-print-directory all build/tests/httpload
	@bench/run

# Fuzz targets: the library once more, built by clang with coverage for libFuzzer.
FUZZ_CFLAGS := -std=c11 -g -O1 -D_GNU_SOURCE -Isrc -MMD -MP -fsanitize=fuzzer-no-link,address,undefined \
               $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzzobj/%.o)
build/fuzzobj/%.o: %.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC/FUZZ $<")
	$(Q)clang $(FUZZ_CFLAGS) -c -o $@ $<
build/libvigil-fuzz.a: $(FUZZ_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^
build/fuzz/%: fuzz/%.c build/libvigil-fuzz.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< build/libvigil-fuzz.a $(LDLIBS)

fuzz: $(FUZZ_BIN)
	@fuzz/run $(FUZZ_BIN)

demo:
	@tests/deps.sh demo
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

install: build/vigil
	install -D -m 0755 build/vigil $(DESTDIR)/usr/local/bin/vigil
	install -D -m 0644 docs/vigil.1 $(DESTDIR)/usr/local/share/man/man1/vigil.1
	install -D -m 0644 dist/vigil-agent.service $(DESTDIR)/etc/systemd/system/vigil-agent.service
	install -D -m 0644 dist/vigil-serve.service $(DESTDIR)/etc/systemd/system/vigil-serve.service
	mkdir -p $(DESTDIR)/usr/local/share/vigil && cp -r data/. $(DESTDIR)/usr/local/share/vigil/
	@# vigil-serve.service runs as the system user vigil: made here when installing onto this system
	@if [ -z "$(DESTDIR)" ] && ! getent passwd vigil >/dev/null; then \
	    useradd --system --user-group --home-dir /var/lib/vigil --no-create-home --shell /usr/sbin/nologin vigil; fi

# A Debian package (dpkg-deb): /usr/bin/vigil, /usr/share/vigil, systemd units.
deb: build/vigil
	@scripts/mkdeb.sh

# The container image (an OCI archive under build/) from Debian packages and that .deb, as root:
# mmdebstrap, umoci, skopeo (docs/kubernetes.md).
image: deb
	@scripts/mkimage.sh

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(SAN_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) build/obj/src/main.d build/san/src/main.d
