/* What the cuDNN attention's two files share (attention_cudnn.cu says what
 * the attention is): the library's entry points, loaded once
 * (attention_cudnn.cu), and a graph with its builder, which
 * attention_cudnn_graph.cu fills for each shape and attention_cudnn.cu runs.
 * Private to those two files. */
#ifndef COD_CUDA_CUDNN_CUH
#define COD_CUDA_CUDNN_CUH

#include <cstddef>
#include <cstdint>

#include <cudnn_graph.h>

/* the entry points used, resolved from the library by name */
struct cudnn_library {
    void *lib;
    int tried;
    char why[768]; /* why it cannot be used, once tried */
    size_t version;
    char name[32]; /* "cuDNN 9.19.0" */
    decltype(&cudnnGetVersion) GetVersion;
    decltype(&cudnnGetErrorString) GetErrorString;
    decltype(&cudnnGetLastErrorString) GetLastErrorString;
    decltype(&cudnnCreate) Create;
    decltype(&cudnnSetStream) SetStream;
    decltype(&cudnnBackendCreateDescriptor) CreateDescriptor;
    decltype(&cudnnBackendDestroyDescriptor) DestroyDescriptor;
    decltype(&cudnnBackendSetAttribute) SetAttribute;
    decltype(&cudnnBackendGetAttribute) GetAttribute;
    decltype(&cudnnBackendFinalize) Finalize;
    decltype(&cudnnBackendExecute) Execute;
};
extern struct cudnn_library cudnn_lib;

/* cuDNN's message about its last failure, on one line */
void cudnn_last_error(char *s, size_t n);
/* "CALL: CUDNN_STATUS_…: cuDNN's own message" into why */
void cudnn_describe(cudnnStatus_t s, const char *call, char *why, size_t n);
/* 0 once cuDNN is loaded and its version accepted; -1 with why */
int cudnn_load(char *why, size_t n);

enum { MAX_DESCS = 96, MAX_DEVICES = 16, MAX_SHAPES = 32 };

/* a graph and the descriptors it holds */
struct cudnn_graph {
    cudnnBackendDescriptor_t plan;
    int64_t workspace;
    cudnnBackendDescriptor_t held[MAX_DESCS]; /* everything the plan was made of */
    int n_held;
};

/* Building one graph: the first failure is kept, naming the call, and
 * every later step does nothing. */
struct cudnn_builder {
    struct cudnn_graph *g;
    cudnnHandle_t handle;
    cudnnBackendDescriptor_t device; /* or a described device's properties */
    char *why;
    size_t whylen;
    bool failed;
};

/* tensor ids of the graphs' inputs and outputs (the variant packs') */
enum {
    U_Q = 1, U_K, U_V, U_O, U_STATS, U_DO, U_DQ, U_DK, U_DV, U_SUM, U_SCALE, U_NEG_INF, U_ONE,
    U_VIRTUAL = 100, /* and up: tensors between the ops */
};

/* its descriptors destroyed: 0, or -1 with why naming the failed call */
int cudnn_drop_graph(struct cudnn_graph *g, char *why, size_t n);
/* the forward and backward graphs of a shape, built into b's graph (b.failed and b.why say
 * if not) */
void cudnn_build_forward(struct cudnn_builder &b, int B, int T, int nh, int hd);
void cudnn_build_backward(struct cudnn_builder &b, int B, int T, int nh, int hd);
/* 1 if cod lets cuDNN see the shape at all; 0 with why */
int cudnn_shape_allowed(int T, int hd, char *why, size_t n);

#endif
