# cod: one Makefile for every program, the tests and the benchmarks.
#   make          build bin/*
#   make test     install what is missing, build, run every test
#   make bench    measure and print the figures for bench/RESULTS.md
#   make test-gpu, make bench-gpu   the GPU checks and the benchmark against
#                 PyTorch, on a machine with a GPU (else a skip)
#   make demo     the main job: fetch the default corpus, train the default spec
#   make corpus [CORPUS=extended]   the default (or the extended) corpus
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ARCH    ?= -march=native
# the release programs' link (tests/gpu/bundle.sh gives them an rpath to the
# libraries it carries beside them)
LDFLAGS ?=
WARN     = -Wall -Wextra -Werror
BASE     = -std=c11 -D_GNU_SOURCE $(WARN) -I. -fopenmp -fno-math-errno -MMD -MP
REL      = $(BASE) -O3 $(ARCH) -g
SAN      = $(BASE) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# cod-server under ThreadSanitizer (tests/server_tsan.sh): its HTTP, store,
# write, waker and reaper threads share the long-poll and store state
TSAN     = -std=c11 -D_GNU_SOURCE $(WARN) -I. -MMD -MP -O1 -g -fsanitize=thread

# Every program's main is in cmd/, one file per program named for it
# (ARCHITECTURE.md); the rules below link each with its parts.

# What several programs share (ARCHITECTURE.md): file formats and durable
# I/O (common/), and the job spec with its cheap data checks (spec/).
COMMON_SRC = $(filter-out $(CLIENT_SRC),$(wildcard common/*.c))
SPEC_SRC   = $(wildcard spec/*.c)
CORE_SRC = $(wildcard kernels/*.c) $(wildcard kernels/cpu/*.c) $(wildcard trainer/*.c)
LIB_SRC  = $(COMMON_SRC) $(SPEC_SRC) $(CORE_SRC)
# BLAS: the CPU backend's matmuls (cblas_sgemm). tests/gpu/bundle.sh --width
# links the reference BLAS instead, statically: its programs train on the GPU.
BLAS    ?= -lopenblas
LIB_LIBS = $(BLAS) -ljansson -lcrypto -lm -fopenmp -lpthread
# Text in (text/): the tokenizers and the readers of compressed text and
# JSON lines, linked into cod-prep and into the trainer's programs, which
# tokenize evaluation tasks and instruction data; never into cod-server.
# text/sentencepiece.cc is C++ because libsentencepiece has no C interface
# (text/sentencepiece.h).
TEXT_SRC  = $(wildcard text/*.c)
TEXT_CXX  = $(wildcard text/*.cc)
TEXT_LIBS = -lpcre2-8 -lcrypto -lz -lzstd -llzma -lsentencepiece -licuuc -lstdc++ -lsnappy
# The Parquet reader (parquet/parquet.h): its pages are compressed with
# snappy, zlib or zstd, its rows are jansson objects.
PARQUET_SRC  = $(wildcard parquet/*.c)
PARQUET_LIBS = -ljansson -lsnappy -lz -lzstd -lm
# Instruction data and a run's start (sft/): records read, rendered and
# tokenized into row sets for the trainer, linked into cod-train and cod-worker.
SFT_SRC   = $(wildcard sft/*.c)
# The evaluation (eval/): multiple-choice tasks scored as lm-evaluation-harness
# scores them, in the trainer's programs (cod-analyze eval, a job's
# analysis.tasks); it tokenizes, so it links text/ too, and reads task
# files in Parquet through parquet/ (snappy is in TEXT_LIBS for that).
EVAL_SRC  = $(wildcard eval/*.c) $(PARQUET_SRC)
REL_EVAL  = $(call obj,rel,$(EVAL_SRC))
SAN_EVAL  = $(call obj,san,$(EVAL_SRC))
# cod-prep's own code: the pipeline from input files to token shards.
PREP_SRC  = $(wildcard prep/*.c) $(PARQUET_SRC)
PREP_LIBS = -ljansson $(TEXT_LIBS) -lm -fopenmp -lpthread
CXXFLAGS_BASE = -std=c++17 -D_GNU_SOURCE $(WARN) -I. -MMD -MP
# cod-server's own code: linked into bin/cod-server and the store tests only.
# The server never computes: it links the spec and common/ and nothing of
# the trainer, the kernels or the tokenizers (no OpenBLAS, no OpenMP).
SERVER_SRC  = $(wildcard schema/*.c views/*.c api/*.c report/*.c daemon/*.c)
SERVER_LIBS = -ljansson -lmicrohttpd -lsqlite3 -lm -lpthread
# The HTTP client (libcurl) that cod-worker and the cod CLI share.
CLIENT_SRC  = common/http_client.c
CLIENT_LIBS = -lcurl
# cod-analyze's analyses (analyze/).
ANALYZE_SRC = $(wildcard analyze/*.c)
REL_ANALYZE = $(call obj,rel,$(ANALYZE_SRC))
# cod-worker's own code: lease loop, heartbeat, report spool (and
# worker/device.c, which cod-train and cod-analyze link too).
WORKER_SRC  = $(wildcard worker/*.c)
CLI_SRC     = $(wildcard clients/cli/*.c)
TEST_SRC = $(wildcard tests/unit/test_*.c)
BENCH_SRC= $(wildcard bench/bench_*.c)

obj = $(patsubst %.c,build/$(1)/%.o,$(2))
REL_LIB   = $(call obj,rel,$(LIB_SRC))
SAN_LIB   = $(call obj,san,$(LIB_SRC))
REL_TEXT  = $(call obj,rel,$(TEXT_SRC)) $(patsubst %.cc,build/rel/%.o,$(TEXT_CXX))
SAN_TEXT  = $(call obj,san,$(TEXT_SRC)) $(patsubst %.cc,build/san/%.o,$(TEXT_CXX))
REL_SFT   = $(call obj,rel,$(SFT_SRC))
SAN_SFT   = $(call obj,san,$(SFT_SRC))
REL_PREP  = $(call obj,rel,$(PREP_SRC) $(COMMON_SRC)) $(REL_TEXT)
SAN_PREP  = $(call obj,san,$(PREP_SRC)) $(SAN_TEXT)
SAN64_LIB = $(call obj,san64,$(LIB_SRC))
REL_SERVER = $(call obj,rel,$(SERVER_SRC) $(SPEC_SRC) $(COMMON_SRC))
SAN_SERVER = $(call obj,san,$(SERVER_SRC))
REL_WORKER = $(call obj,rel,$(WORKER_SRC) $(CLIENT_SRC))
SAN_WORKER = $(call obj,san,$(WORKER_SRC) $(CLIENT_SRC))

PROGRAMS = bin/cod-train bin/cod-analyze bin/cod-prep bin/cod-server bin/cod-worker
ifneq ($(strip $(CLI_SRC)),)
PROGRAMS += bin/cod
endif
TESTS    = $(patsubst tests/unit/%.c,build/tests/%,$(TEST_SRC))
BENCHES  = $(patsubst bench/%.c,build/bench/%,$(BENCH_SRC))

# CUDA is optional: with nvcc the programs link the CUDA sources and say
# "no GPU" cleanly where there is none; without it they are CPU-only.
# cudart is linked statically and cuBLASLt is opened with dlopen at the
# first matmul, so no CUDA library is needed to start. The GPU checks
# (tests/gpu/run.sh) build into build/gpu/, which tests/run.sh never runs
# but make build-tests builds, so that a change that breaks them is seen
# without a GPU.
CUDA_SRC = $(wildcard kernels/cuda/*.cu)
ifneq ($(strip $(NVCC)),)
ifneq ($(strip $(CUDA_SRC)),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_OBJ  = $(patsubst %.cu,build/cuda/%.o,$(CUDA_SRC))
CUDA_DEFS = -DCOD_HAVE_CUDA
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
GPU_BENCHES = build/gpu/bench_train_cuda build/gpu/bench_attention_cuda build/gpu/bench_eval_cuda
GPU_TESTS = build/gpu/test_ops_cuda build/gpu/test_matmul_cuda build/gpu/test_model_cuda build/gpu/test_emu $(GPU_BENCHES) \
            build/gpu/test_cudnn_graphs
endif
endif

all: $(PROGRAMS) $(CUDA_OBJ)

bin/cod-train: build/rel/cmd/cod_train.o build/rel/worker/device.o $(REL_SFT) $(REL_EVAL) $(REL_LIB) $(REL_TEXT) $(CUDA_OBJ)
	@mkdir -p bin
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS) $(CUDA_LIBS)

bin/cod-analyze: build/rel/cmd/cod_analyze.o build/rel/worker/device.o $(REL_ANALYZE) $(REL_EVAL) $(REL_LIB) $(REL_TEXT) $(CUDA_OBJ)
	@mkdir -p bin
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS) $(CUDA_LIBS)

bin/cod-worker: build/rel/cmd/cod_worker.o $(REL_WORKER) $(REL_SFT) $(REL_EVAL) $(REL_LIB) $(REL_TEXT) $(CUDA_OBJ)
	@mkdir -p bin
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS) $(CLIENT_LIBS) $(CUDA_LIBS)

bin/cod: $(call obj,rel,cmd/cod.c $(CLI_SRC) $(CLIENT_SRC) common/path.c common/fileio.c)
	@mkdir -p bin
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ -ljansson -lm $(CLIENT_LIBS)

bin/cod-prep: build/rel/cmd/cod_prep.o $(REL_PREP)
	@mkdir -p bin
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(PREP_LIBS)

bin/cod-server: build/rel/cmd/cod_server.o $(REL_SERVER)
	@mkdir -p bin
	$(CC) $(filter-out -fopenmp,$(REL)) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS)

# A file as the lines of a C string literal, for a source to include.
CSTRING = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'

# schema/*.sql (schema.sql, then one file per later migration) is the one
# definition of the schema; migrate.c includes each as a C string.
build/gen/%_sql.inc: schema/%.sql
	@mkdir -p $(dir $@)
	$(CSTRING) $< > $@
build/rel/schema/migrate.o build/san/schema/migrate.o: $(patsubst schema/%.sql,build/gen/%_sql.inc,$(wildcard schema/*.sql))

# api/openapi.json, the API's description, is served at /openapi.json from
# the string api/openapi.c includes.
build/gen/openapi_json.inc: api/openapi.json
	@mkdir -p $(dir $@)
	$(CSTRING) $< > $@
build/rel/api/openapi.o build/san/api/openapi.o: build/gen/openapi_json.inc

# The dashboard (clients/web/) is compiled into cod-server: api/static.c
# includes every file there as a byte array, so the binary needs no install path.
WEB_FILES = $(shell find clients/web -type f | LC_ALL=C sort)
build/gen/web_assets.inc: scripts/embed_web.sh $(WEB_FILES)
	@mkdir -p $(dir $@)
	scripts/embed_web.sh clients/web $(WEB_FILES) > $@.tmp && mv $@.tmp $@
build/rel/api/static.o build/san/api/static.o: build/gen/web_assets.inc

build/rel/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(CUDA_DEFS) -c $< -o $@

build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -c $< -o $@

build/rel/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_BASE) -O3 $(ARCH) -g -c $< -o $@

build/san/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_BASE) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -c $< -o $@

build/tsan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(TSAN) -c $< -o $@

build/tsan-bin/cod-server: $(call obj,tsan,cmd/cod_server.c $(SERVER_SRC) $(SPEC_SRC) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(TSAN) -o $@ $^ $(SERVER_LIBS)

build/san64/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -DCOD_REAL_DOUBLE -c $< -o $@

# A test named *_f64 checks gradients in double precision: it is built
# against the double build of the kernels and the trainer.
build/tests/%_f64: build/san64/tests/unit/%_f64.o $(SAN64_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS)

# The store and server tests link the server's objects (static pattern: wins over the rule below).
SERVER_TESTS = $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_store*.c tests/unit/test_views*.c tests/unit/test_server*.c))
$(SERVER_TESTS): build/tests/%: build/san/tests/unit/%.o $(SAN_SERVER) $(SAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS) $(SERVER_LIBS)

# A failing disk under SQLite (tests/faulty_vfs.h): linked into the store's
# fault test, and built as a library to preload into the real cod-server
# (tests/server_faults.sh), so that cod-server itself carries no test hook.
build/tests/test_store_faults: build/san/tests/faulty_vfs.o
build/test-lib/faulty_vfs.so: tests/faulty_vfs.c tests/faulty_vfs.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -I. -O1 -g -fPIC -shared -o $@ $< -lsqlite3 -lpthread

# The worker tests link the worker's objects and libcurl.
WORKER_TESTS = $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_worker*.c))
$(WORKER_TESTS): build/tests/%: build/san/tests/unit/%.o $(SAN_WORKER) $(SAN_SFT) $(SAN_EVAL) $(SAN_LIB) $(SAN_TEXT)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS) $(CLIENT_LIBS)

# cod-worker built with the sanitizers, for tests/worker_sanitized.sh.
build/san-bin/cod-worker: build/san/cmd/cod_worker.o $(SAN_WORKER) $(SAN_SFT) $(SAN_EVAL) $(SAN_LIB) $(SAN_TEXT)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS) $(CLIENT_LIBS)

build/tests/%: build/san/tests/unit/%.o $(SAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS)

# The Parquet tests: the reader's unit test with the tests' own writer
# (tests/parquet/writer.h), and the tools the shell tests and the
# benchmark drive it with.
PARQUET_TOOLS = build/test-tools/parquet_dump build/test-tools/parquet_write
build/tests/test_parquet: build/san/tests/unit/test_parquet.o build/san/tests/parquet/writer.o \
		$(call obj,san,$(PARQUET_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(PARQUET_LIBS)
build/test-tools/parquet_dump: build/san/tests/parquet/dump.o $(call obj,san,$(PARQUET_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(PARQUET_LIBS)
build/test-tools/parquet_write: build/rel/tests/parquet/write_tool.o build/rel/tests/parquet/writer.o
	@mkdir -p $(dir $@)
	$(CC) $(REL) -o $@ $^ $(PARQUET_LIBS)
# The instruction data's tests link sft/, eval/ (its tokenizers of a start) and text/.
build/tests/test_sft: build/tests/%: build/san/tests/unit/%.o $(SAN_SFT) $(SAN_EVAL) $(SAN_LIB) $(SAN_TEXT)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS)
# The evaluation's tests link eval/ and text/.
EVAL_TESTS = $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_eval*.c))
$(EVAL_TESTS): build/tests/%: build/san/tests/unit/%.o $(SAN_EVAL) $(SAN_LIB) $(SAN_TEXT)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS)
build/bench/bench_eval: build/rel/bench/bench_eval.o $(REL_EVAL) $(REL_LIB) $(REL_TEXT)
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS) $(TEXT_LIBS)

# The tokenizer and cod-prep tests, and the benchmarks of both, link prep/ and text/.
PREP_TESTS = $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_prep*.c)) build/tests/test_tokenizer
$(PREP_TESTS): build/tests/%: build/san/tests/unit/%.o $(SAN_PREP) $(call obj,san,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(PREP_LIBS)
PREP_BENCHES = build/bench/bench_tokenize build/bench/bench_prep
build/bench/bench_prep: build/rel/tests/parquet/writer.o
$(PREP_BENCHES): build/bench/%: build/rel/bench/%.o $(REL_PREP)
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(PREP_LIBS)

# a sweep's expansion in process: the server's own api/submit.c
build/bench/bench_sweep: build/rel/bench/bench_sweep.o build/rel/api/submit.o \
		$(call obj,rel,$(SPEC_SRC) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS)

build/bench/%: build/rel/bench/%.o $(REL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS)

build/cuda/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O3 --default-stream per-thread -I. -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
		-Xcompiler -Wall,-Wextra,-Werror -MMD -MP -DCOD_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"' -c $< -o $@

build/gpu/%: build/rel/tests/gpu/%.o $(REL_LIB) $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(LDFLAGS) -o $@ $^ $(LIB_LIBS) $(CUDA_LIBS)

# the emulator's probes (kernels/cuda/emu/probes.cu) on a GPU; emulated below
build/gpu/test_emu: build/cuda/kernels/cuda/emu/probes.o

$(GPU_BENCHES): build/gpu/%: build/rel/bench/gpu/%.o $(REL_LIB) $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(REL) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_LIBS) $(GPU_EXTRA_LIBS) $(CUDA_LIBS)
# the evaluation's benchmark reads and tokenizes its task
build/gpu/bench_eval_cuda: $(REL_EVAL) $(REL_TEXT)
build/gpu/bench_eval_cuda: GPU_EXTRA_LIBS = $(TEXT_LIBS)

gpu-tests: $(GPU_TESTS)

# The CUDA emulator (kernels/cuda/emu/emu.h): the CUDA backend's own
# sources, each launch and __shared__ declaration rewritten by launch.sed,
# built for the CPU with the host's C++ compiler and the sanitizers, with
# an emulated runtime and cuBLASLt (a library of cuBLASLt's name, found
# first through the programs' RPATH). The GPU checks, cod-train and the
# benchmark's program linked against them (build/emu/bin/) run in make
# test (tests/cuda_emu.sh) wherever the CUDA headers are, GPU or not.
ifneq ($(strip $(CUDA_OBJ)),)
EMU_FLAGS = -std=c++17 -D_GNU_SOURCE $(WARN) -Wno-unknown-pragmas -Ibuild/emu/src -I. -I$(CUDA_HOME)/include \
            -DCOD_CUDA_EMU -DCOD_HAVE_CUDA -O1 -g -fsanitize=address,undefined \
            -fno-omit-frame-pointer -fno-sanitize-recover=all -MMD -MP
EMU_CUDA  = $(filter-out kernels/cuda/comm_nccl.cu,$(CUDA_SRC))
EMU_OWN   = $(filter-out kernels/cuda/emu/cublaslt.cc,$(wildcard kernels/cuda/emu/*.cc))
EMU_OBJ   = $(patsubst %.cu,build/emu/obj/%.o,$(EMU_CUDA)) $(patsubst %.cc,build/emu/obj/%.o,$(EMU_OWN))
EMU_LT    = build/emu/lib/libcublasLt.so.13
EMU_HDRS  = $(patsubst %,build/emu/src/%,$(wildcard kernels/cuda/*.cuh))
EMU_BINS  = build/emu/bin/test_ops_cuda build/emu/bin/test_matmul_cuda build/emu/bin/test_model_cuda build/emu/bin/test_emu \
            build/emu/bin/cod-train build/emu/bin/cod-analyze build/emu/bin/bench_train_cuda \
            build/emu/bin/bench_attention_cuda build/emu/bin/bench_eval_cuda
# A dry run of the time-boxed GPU plan here (tests/gpu/README.md,
# COD_BIN_DRY; make test's tests/gpu_plan.sh): the emulator's programs,
# cod-worker among them, beside the CPU-only server and CLI in one directory.
EMU_WORKER = build/emu/bin/cod-worker

$(EMU_BINS) $(EMU_WORKER): $(SAN_LIB) $(EMU_OBJ) $(EMU_LT)
	@mkdir -p $(dir $@)
	$(CXX) -fsanitize=address,undefined -rdynamic -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../lib' \
		-o $@ $(filter %.o,$^) $(LIB_LIBS) $(EMU_EXTRA_LIBS)
build/emu/bin/test_ops_cuda: build/emu/obj/tests/gpu/test_ops_cuda.o
build/emu/bin/test_matmul_cuda: build/emu/obj/tests/gpu/test_matmul_cuda.o
build/emu/bin/test_model_cuda: build/emu/obj/tests/gpu/test_model_cuda.o
build/emu/bin/test_emu: build/emu/obj/tests/gpu/test_emu.o build/emu/obj/kernels/cuda/emu/probes.o
build/emu/bin/cod-train: build/emu/obj/cmd/cod_train.o build/emu/obj/worker/device.o
build/emu/bin/cod-analyze: build/emu/obj/cmd/cod_analyze.o build/emu/obj/worker/device.o \
                           $(call obj,emu/obj,$(ANALYZE_SRC))
# the trainer's programs tokenize (evaluation tasks, instruction data)
build/emu/bin/cod-train build/emu/bin/cod-analyze $(EMU_WORKER): $(SAN_TEXT) $(SAN_EVAL)
build/emu/bin/cod-train $(EMU_WORKER): $(call obj,emu/obj,$(SFT_SRC))
build/emu/bin/cod-train build/emu/bin/cod-analyze: EMU_EXTRA_LIBS = $(TEXT_LIBS)
build/emu/bin/bench_train_cuda: build/emu/obj/bench/gpu/bench_train_cuda.o
build/emu/bin/bench_attention_cuda: build/emu/obj/bench/gpu/bench_attention_cuda.o
build/emu/bin/bench_eval_cuda: build/emu/obj/bench/gpu/bench_eval_cuda.o $(SAN_TEXT) $(SAN_EVAL)
build/emu/bin/bench_eval_cuda: EMU_EXTRA_LIBS = $(TEXT_LIBS)
$(EMU_WORKER): build/emu/obj/cmd/cod_worker.o $(call obj,emu/obj,$(WORKER_SRC) $(CLIENT_SRC)) \
               build/emu/obj/kernels/cuda/comm_nccl.o
$(EMU_WORKER): EMU_EXTRA_LIBS = $(TEXT_LIBS) $(CLIENT_LIBS)
$(EMU_OBJ) build/emu/obj/kernels/cuda/emu/probes.o: | $(EMU_HDRS)

emu-dry: $(EMU_BINS) $(EMU_WORKER) bin/cod-server bin/cod bin/cod-analyze
	@mkdir -p build/emu/dry
	ln -sf $(abspath $^) build/emu/dry/
endif

build/emu/src/%.cc: %.cu kernels/cuda/emu/launch.sed
	@mkdir -p $(dir $@)
	{ echo '#line 1 "$<"'; sed -E -f kernels/cuda/emu/launch.sed $<; } > $@.tmp && mv $@.tmp $@

# the kernels' headers too, found before the originals (-Ibuild/emu/src)
build/emu/src/%.cuh: %.cuh kernels/cuda/emu/launch.sed
	@mkdir -p $(dir $@)
	{ echo '#line 1 "$<"'; sed -E -f kernels/cuda/emu/launch.sed $<; } > $@.tmp && mv $@.tmp $@

build/emu/obj/kernels/cuda/%.o: build/emu/src/kernels/cuda/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_FLAGS) -include kernels/cuda/emu/emu.h -c $< -o $@

build/emu/obj/kernels/cuda/emu/%.o: kernels/cuda/emu/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_FLAGS) -O2 -include kernels/cuda/emu/emu.h -c $< -o $@

# the C that calls the backend (the GPU checks, cod-train's device choice,
# the benchmark), built as the sanitized tests are but with CUDA
build/emu/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -DCOD_HAVE_CUDA -c $< -o $@

# optimised and uninstrumented: it widens every operand, and checks by
# itself that each lies in device memory
$(EMU_LT): kernels/cuda/emu/cublaslt.cc
	@mkdir -p $(dir $@)
	$(CXX) $(filter-out -fsanitize=% -O1,$(EMU_FLAGS)) -O2 -fPIC -shared -Wl,-soname,$(notdir $@) \
		-o $@ $< -lopenblas

# the targets below that build as a step of theirs use every core, unless
# make was given its own -j
JOBS    ?= $(shell nproc)
SUBMAKE  = $(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

deps:
	scripts/deps.sh

build-tests: $(PROGRAMS) $(TESTS) $(PARQUET_TOOLS) $(CUDA_OBJ) $(GPU_TESTS) $(EMU_BINS) $(EMU_WORKER) build/san-bin/cod-worker \
             build/test-lib/faulty_vfs.so build/tsan-bin/cod-server

test:
	scripts/deps.sh test
	$(SUBMAKE) build-tests
	tests/run.sh

# CORPUS=extended: the default corpus and more English (docs/data.md)
corpus:
	scripts/deps.sh $(if $(filter extended,$(CORPUS)),corpus-extended)
	$(SUBMAKE) bin/cod-prep
	CORPUS="$(CORPUS)" scripts/corpus.sh

demo: deps
	$(SUBMAKE) all
	scripts/demo.sh

bench: deps
	$(SUBMAKE) all $(BENCHES) build/test-tools/parquet_write
	bench/run.sh

# The GPU checks (tests/gpu/run.sh) and the benchmark against PyTorch
# (bench/gpu/run.sh), on a machine with an NVIDIA GPU: each builds what it
# needs (the CUDA toolkit and make's dependencies), or runs from the bundle
# on a GPU node without a compiler (tests/gpu/README.md). Without a GPU each
# says so and exits 0: make test checks the kernels on the CUDA emulator.
test-gpu:
	tests/gpu/run.sh

bench-gpu:
	bench/gpu/run.sh

# PREFIX and DESTDIR as usual: make install PREFIX=/usr DESTDIR=/tmp/stage
PREFIX  ?= /usr/local
install: all
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh

clean:
	rm -rf build bin

.PHONY: all deps build-tests test corpus demo bench test-gpu bench-gpu install clean emu-dry
.SECONDARY:

# ---- Fuzzing (issue 14) ------------------------------------------------------
# libFuzzer harnesses (tests/fuzz/fuzz_*.c) for every reader of untrusted
# bytes, built with clang, ASan and UBSan into build/fuzz/. `make fuzz` runs
# each for FUZZ_SECONDS from its checked-in seeds (tests/fuzz/corpus/NAME/)
# and keeps what it finds in var/fuzz/NAME/ (tests/fuzz/run.sh);
# tests/fuzz_replay.sh, in `make test`, replays the seeds and fuzzes each
# harness for a few seconds. OpenMP's pragmas are off (-fopenmp=libgomp:
# a harness runs on one thread), its calls go to libgomp, as OpenBLAS's do.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_NAMES    = spec sweep http worker safetensors shard checkpoint tok_gpt2 tok_llama tok_hf jsonl parquet eval
FUZZ_BINS     = $(FUZZ_NAMES:%=build/fuzz/fuzz_%)
FUZZ_CFLAGS   = -std=c11 -D_GNU_SOURCE $(WARN) -I. -O1 -g -fno-omit-frame-pointer \
                -fsanitize=address,undefined -fno-sanitize-recover=all -fopenmp=libgomp
fobj = $(patsubst %.c,build/fuzz/obj/%.o,$(1))
FUZZ_BASE     = $(call fobj,tests/fuzz/fuzz_util.c $(COMMON_SRC) $(SPEC_SRC))
FUZZ_SERVER   = $(call fobj,tests/fuzz/http_driver.c $(SERVER_SRC))
FUZZ_TRAINER  = $(call fobj,$(CORE_SRC))
FUZZ_PREP     = $(call fobj,tests/fuzz/tok_round_trip.c $(TEXT_SRC)) \
                $(patsubst %.cc,build/fuzz/obj/%.o,$(TEXT_CXX))
FUZZ_CXX     ?= clang++

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
build/fuzz/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(filter-out -std=c11 -fopenmp=libgomp,$(FUZZ_CFLAGS)) -std=c++17 -fno-sanitize=vptr \
		-fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
build/fuzz/obj/schema/migrate.o: $(patsubst schema/%.sql,build/gen/%_sql.inc,$(wildcard schema/*.sql))
build/fuzz/obj/api/openapi.o: build/gen/openapi_json.inc
build/fuzz/obj/api/static.o: build/gen/web_assets.inc

FUZZ_LINK = $(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^
build/fuzz/fuzz_spec: build/fuzz/obj/tests/fuzz/fuzz_spec.o $(FUZZ_BASE)
	$(FUZZ_LINK) -ljansson -lm
build/fuzz/fuzz_sweep: build/fuzz/obj/tests/fuzz/fuzz_sweep.o $(call fobj,api/submit.c) $(FUZZ_BASE)
	$(FUZZ_LINK) -ljansson -lm
build/fuzz/fuzz_http build/fuzz/fuzz_worker: build/fuzz/fuzz_%: build/fuzz/obj/tests/fuzz/fuzz_%.o \
		$(FUZZ_SERVER) $(FUZZ_BASE)
	$(FUZZ_LINK) $(SERVER_LIBS)
build/fuzz/fuzz_safetensors: build/fuzz/obj/tests/fuzz/fuzz_safetensors.o \
		$(call fobj,trainer/safetensors.c) $(FUZZ_BASE)
	$(FUZZ_LINK) -ljansson -lm
build/fuzz/fuzz_shard: build/fuzz/obj/tests/fuzz/fuzz_shard.o \
		$(call fobj,trainer/dataloader.c trainer/rng.c) $(FUZZ_BASE)
	$(FUZZ_LINK) -ljansson -lm
build/fuzz/fuzz_checkpoint: build/fuzz/obj/tests/fuzz/fuzz_checkpoint.o $(FUZZ_TRAINER) $(FUZZ_BASE)
	$(FUZZ_LINK) $(LIB_LIBS)
build/fuzz/fuzz_tok_gpt2 build/fuzz/fuzz_tok_llama build/fuzz/fuzz_tok_hf: build/fuzz/fuzz_%: build/fuzz/obj/tests/fuzz/fuzz_%.o \
		$(FUZZ_PREP) $(FUZZ_BASE)
	$(FUZZ_LINK) $(filter-out -fopenmp,$(PREP_LIBS))
build/fuzz/fuzz_jsonl: build/fuzz/obj/tests/fuzz/fuzz_jsonl.o $(call fobj,text/jsonl.c) $(FUZZ_BASE)
	$(FUZZ_LINK) -ljansson -lm
build/fuzz/fuzz_parquet: build/fuzz/obj/tests/fuzz/fuzz_parquet.o $(call fobj,$(PARQUET_SRC)) $(FUZZ_BASE)
	$(FUZZ_LINK) $(PARQUET_LIBS)
# the evaluation's reading of a task file: its text side, not the model's
FUZZ_EVAL = $(call fobj,eval/task.c eval/layout.c eval/prompt.c eval/encode.c eval/rows.c \
                         eval/pystr.c eval/pyrandom.c $(PARQUET_SRC))
build/fuzz/fuzz_eval: build/fuzz/obj/tests/fuzz/fuzz_eval.o $(FUZZ_EVAL) $(FUZZ_PREP) $(FUZZ_BASE)
	$(FUZZ_LINK) $(filter-out -fopenmp,$(PREP_LIBS)) -lgomp

fuzz-build: $(FUZZ_BINS)
build-tests: fuzz-build
fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

.PHONY: fuzz fuzz-build

-include $(shell find build -name '*.d' 2>/dev/null)
