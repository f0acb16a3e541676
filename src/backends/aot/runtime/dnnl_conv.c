/* Channels-last convs through oneDNN's C API, in every generated library
 * that has one: oneDNN's engine, a mutex-guarded cache of primitives per
 * (step, batch size), and one call that runs a conv. The run that holds the
 * model's arena also owns the cached stream, memory objects and scratchpad;
 * concurrent runs make their own, so hone_aot_run stays callable from several
 * threads. Included into the generated source as text after core.c, with
 * NUM_DN_SLOTS (one per step) defined before it (see runtime/README.md). */
/* The prelude declares dnnl_sgemm itself (returning int); the header's own
 * declaration is renamed out of the way so the two do not conflict. */
#define dnnl_sgemm hone_unused_dnnl_sgemm_decl
#include <oneapi/dnnl/dnnl.h>
#undef dnnl_sgemm
#include <pthread.h>
#define HONE_USES_DNNL 1

typedef struct {
  int binary;
  dnnl_alg_kind_t alg;
  float alpha, beta;
} dn_post_desc;

/* One channels-last conv, as constant over batch sizes. */
typedef struct {
  const char* node;
  int64_t c, ih, iw, m, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl, pb, pr, groups;
  int has_bias, n_post;
  dn_post_desc post[8];
  int src_nchw; /* reads NCHW, writes nChw16c scratch, reorders that to NHWC */
  int blocked;  /* src and dst nChw16c (src_nchw: reads NCHW, writes nChw16c, no reorder) */
} dn_conv_desc;

#define DN_MAX_ARGS 16

/* The primitive of one conv at one batch size. */
typedef struct dn_conv_entry {
  struct dn_conv_entry* next;
  int64_t nb;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t src_md, wei_md, bias_md, dst_md, scratch_md;
  dnnl_memory_desc_t conv_dst_md; /* dst_md, or nChw16c when src_nchw */
  dnnl_primitive_t reo;           /* conv_dst_md -> dst_md, when src_nchw */
  dnnl_exec_arg_t rargs[2];
  void* wei; /* weights in the primitive's format, or NULL: the blob's own are */
  size_t scratch_bytes;
  void* scratch; /* for the run holding the model's arena */
  int nargs;
  dnnl_exec_arg_t args[DN_MAX_ARGS]; /* likewise: memory objects whose handles each run sets */
} dn_conv_entry;

typedef struct {
  pthread_mutex_t mu;
  dnnl_engine_t eng;
  dnnl_stream_t stream; /* for the run holding the model's arena */
  dn_conv_entry* conv[NUM_DN_SLOTS];
} dn_state;

static void dn_free_args(dnnl_exec_arg_t* args, int n) {
  for (int i = 0; i < n; ++i)
    if (args[i].memory) dnnl_memory_destroy(args[i].memory);
}

static void dn_free_entry(dn_conv_entry* e) {
  if (e->prim) dnnl_primitive_destroy(e->prim);
  if (e->reo) dnnl_primitive_destroy(e->reo);
  dn_free_args(e->args, e->nargs);
  dn_free_args(e->rargs, 2);
  free(e->wei);
  free(e->scratch);
  free(e);
}

static void dn_free(void* p) {
  dn_state* s = (dn_state*)p;
  if (!s) return;
  for (int i = 0; i < NUM_DN_SLOTS; ++i)
    for (dn_conv_entry* e = s->conv[i]; e;) {
      dn_conv_entry* next = e->next;
      dn_free_entry(e);
      e = next;
    }
  if (s->stream) dnnl_stream_destroy(s->stream);
  if (s->eng) dnnl_engine_destroy(s->eng);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static int dn_init(hone_model* m) {
  dn_state* s = (dn_state*)calloc(1, sizeof(dn_state));
  if (!s) return set_error(HONE_AOT_OUT_OF_MEMORY, "out of memory for oneDNN state");
  pthread_mutex_init(&s->mu, NULL);
  dnnl_status_t st = dnnl_engine_create(&s->eng, dnnl_cpu, 0);
  if (st == dnnl_success) st = dnnl_stream_create(&s->stream, s->eng, dnnl_stream_default_flags);
  if (st != dnnl_success) {
    set_error(HONE_AOT_KERNEL_FAILED, "cannot create oneDNN's CPU engine and stream (status %d)",
              (int)st);
    dn_free(s);
    return -1;
  }
  m->dn = s;
  m->free_dn = dn_free;
  return 0;
}

static void* dn_alloc(size_t bytes) {
  return bytes ? aligned_alloc(64, (bytes + 63) / 64 * 64) : NULL;
}

#define DN_CHECK(call, what)                                                           \
  do {                                                                                 \
    const dnnl_status_t st_ = (call);                                                  \
    if (st_ != dnnl_success) {                                                         \
      set_error(HONE_AOT_KERNEL_FAILED,                                                \
                "node '%s' (Conv, batch %lld): oneDNN %s failed (status %d)", k->node, \
                (long long)nb, what, (int)st_);                                        \
      goto fail;                                                                       \
    }                                                                                  \
  } while (0)

/* Memory objects for one execution, in `args`, with no buffers yet (see dn_bind). */
static int dn_make_args(dnnl_engine_t eng, const dn_conv_entry* e, const dn_conv_desc* k,
                        int64_t nb, dnnl_exec_arg_t* args, int* n) {
  *n = 0;
#define DN_ARG(id, md)                                                                     \
  do {                                                                                     \
    args[*n].arg = (id);                                                                   \
    args[*n].memory = NULL;                                                                \
    DN_CHECK(dnnl_memory_create(&args[*n].memory, (md), eng, DNNL_MEMORY_NONE), "memory"); \
    ++*n;                                                                                  \
  } while (0)
  DN_ARG(DNNL_ARG_SRC, &e->src_md);
  DN_ARG(DNNL_ARG_WEIGHTS, &e->wei_md);
  DN_ARG(DNNL_ARG_DST, &e->conv_dst_md);
  if (k->has_bias) DN_ARG(DNNL_ARG_BIAS, &e->bias_md);
  if (e->scratch_bytes) DN_ARG(DNNL_ARG_SCRATCHPAD, &e->scratch_md);
  for (int i = 0; i < k->n_post; ++i)
    if (k->post[i].binary) DN_ARG(DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1, &e->dst_md);
#undef DN_ARG
  return 0;
fail:
  dn_free_args(args, *n);
  *n = 0;
  return -1;
}

static dn_conv_entry* dn_conv_create(dn_state* s, const dn_conv_desc* k, int64_t nb,
                                     const float* w) {
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  dnnl_primitive_desc_t pd = NULL, rpd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_memory_t wsrc = NULL, wdst = NULL;
  dnnl_stream_t stream = NULL;
  dn_conv_entry* e = (dn_conv_entry*)calloc(1, sizeof(dn_conv_entry));
  if (!e) {
    set_error(HONE_AOT_OUT_OF_MEMORY, "node '%s' (Conv): out of memory", k->node);
    return NULL;
  }
  e->nb = nb;
  dnnl_memory_desc_t user_wei, any_wei;
  {
    dnnl_dims_t sd = {nb, k->c, k->ih, k->iw}, dd = {nb, k->m, k->oh, k->ow}, bd = {k->m};
    const dnnl_format_tag_t act = k->blocked ? dnnl_nChw16c : dnnl_nhwc;
    DN_CHECK(
        dnnl_memory_desc_init_by_tag(&e->src_md, 4, sd, dnnl_f32, k->src_nchw ? dnnl_nchw : act),
        "source descriptor");
    DN_CHECK(dnnl_memory_desc_init_by_tag(&e->dst_md, 4, dd, dnnl_f32, act),
             "destination descriptor");
    e->conv_dst_md = e->dst_md;
    if (k->src_nchw && !k->blocked)
      DN_CHECK(dnnl_memory_desc_init_by_tag(&e->conv_dst_md, 4, dd, dnnl_f32, dnnl_nChw16c),
               "destination descriptor");
    DN_CHECK(dnnl_memory_desc_init_by_tag(&e->bias_md, 1, bd, dnnl_f32, dnnl_a), "bias descriptor");
  }
  if (k->groups > 1) {
    dnnl_dims_t wd = {k->groups, k->m / k->groups, k->c / k->groups, k->kh, k->kw};
    DN_CHECK(dnnl_memory_desc_init_by_tag(&user_wei, 5, wd, dnnl_f32, dnnl_goihw),
             "weights descriptor");
    DN_CHECK(dnnl_memory_desc_init_by_tag(&any_wei, 5, wd, dnnl_f32, dnnl_format_tag_any),
             "weights descriptor");
  } else {
    dnnl_dims_t wd = {k->m, k->c, k->kh, k->kw};
    DN_CHECK(dnnl_memory_desc_init_by_tag(&user_wei, 4, wd, dnnl_f32, dnnl_oihw),
             "weights descriptor");
    DN_CHECK(dnnl_memory_desc_init_by_tag(&any_wei, 4, wd, dnnl_f32, dnnl_format_tag_any),
             "weights descriptor");
  }
  {
    dnnl_convolution_desc_t cd;
    dnnl_dims_t strides = {k->sh, k->sw}, dil = {k->dh - 1, k->dw - 1}, pl = {k->pt, k->pl},
                pr = {k->pb, k->pr};
    DN_CHECK(dnnl_dilated_convolution_forward_desc_init(
                 &cd, dnnl_forward_inference, dnnl_convolution_direct, &e->src_md, &any_wei,
                 k->has_bias ? &e->bias_md : NULL, &e->conv_dst_md, strides, dil, pl, pr),
             "convolution descriptor");
    DN_CHECK(dnnl_primitive_attr_create(&attr), "attributes");
    DN_CHECK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
             "scratchpad mode");
    if (k->n_post > 0) {
      DN_CHECK(dnnl_post_ops_create(&po), "post-ops");
      for (int i = 0; i < k->n_post; ++i) {
        if (k->post[i].binary)
          DN_CHECK(dnnl_post_ops_append_binary(po, k->post[i].alg, &e->dst_md), "binary post-op");
        else
          DN_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, k->post[i].alg, k->post[i].alpha,
                                                k->post[i].beta),
                   "eltwise post-op");
      }
      DN_CHECK(dnnl_primitive_attr_set_post_ops(attr, po), "post-ops");
    }
    DN_CHECK(dnnl_primitive_desc_create(&pd, &cd, attr, s->eng, NULL), "primitive descriptor");
    DN_CHECK(dnnl_primitive_create(&e->prim, pd), "primitive");
  }
  e->wei_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  {
    const dnnl_memory_desc_t* sp = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (sp) e->scratch_md = *sp;
    e->scratch_bytes = sp ? dnnl_memory_desc_get_size(sp) : 0;
  }
  if (e->scratch_bytes && !(e->scratch = dn_alloc(e->scratch_bytes))) {
    set_error(HONE_AOT_OUT_OF_MEMORY, "node '%s' (Conv): out of memory for a %llu-byte scratchpad",
              k->node, (unsigned long long)e->scratch_bytes);
    goto fail;
  }
  if (!dnnl_memory_desc_equal(&e->wei_md, &user_wei)) {
    /* The primitive wants its own weights layout: reorder the blob's once. */
    e->wei = dn_alloc(dnnl_memory_desc_get_size(&e->wei_md));
    if (!e->wei) {
      set_error(HONE_AOT_OUT_OF_MEMORY, "node '%s' (Conv): out of memory for weights", k->node);
      goto fail;
    }
    DN_CHECK(dnnl_memory_create(&wsrc, &user_wei, s->eng, (void*)w), "memory");
    DN_CHECK(dnnl_memory_create(&wdst, &e->wei_md, s->eng, e->wei), "memory");
    DN_CHECK(dnnl_reorder_primitive_desc_create(&rpd, &user_wei, s->eng, &e->wei_md, s->eng, NULL),
             "weights reorder descriptor");
    DN_CHECK(dnnl_primitive_create(&reorder, rpd), "weights reorder");
    DN_CHECK(dnnl_stream_create(&stream, s->eng, dnnl_stream_default_flags), "stream");
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, wsrc}, {DNNL_ARG_TO, wdst}};
    DN_CHECK(dnnl_primitive_execute(reorder, stream, 2, ra), "weights reorder");
    DN_CHECK(dnnl_stream_wait(stream), "weights reorder");
  }
  if (k->src_nchw && !k->blocked) {
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    rpd = NULL;
    DN_CHECK(
        dnnl_reorder_primitive_desc_create(&rpd, &e->conv_dst_md, s->eng, &e->dst_md, s->eng, NULL),
        "nChw16c to nhwc reorder descriptor");
    DN_CHECK(dnnl_primitive_create(&e->reo, rpd), "nChw16c to nhwc reorder");
    e->rargs[0].arg = DNNL_ARG_FROM;
    e->rargs[1].arg = DNNL_ARG_TO;
    DN_CHECK(dnnl_memory_create(&e->rargs[0].memory, &e->conv_dst_md, s->eng, DNNL_MEMORY_NONE),
             "memory");
    DN_CHECK(dnnl_memory_create(&e->rargs[1].memory, &e->dst_md, s->eng, DNNL_MEMORY_NONE),
             "memory");
  }
  if (dn_make_args(s->eng, e, k, nb, e->args, &e->nargs) != 0) goto fail;
  if (0) {
  fail:
    dn_free_entry(e);
    e = NULL;
  }
  if (stream) dnnl_stream_destroy(stream);
  if (reorder) dnnl_primitive_destroy(reorder);
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  if (wsrc) dnnl_memory_destroy(wsrc);
  if (wdst) dnnl_memory_destroy(wdst);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (po) dnnl_post_ops_destroy(po);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return e;
}

/* Runs the conv of step `slot` at batch nb: y = post_ops(conv(x, w) + b). With
 * src_nchw, `tmp` holds the conv's nChw16c result before its reorder into y. */
static int dn_conv_run(const ctx_t* c, int slot, const dn_conv_desc* k, int64_t nb, const float* x,
                       const float* w, const float* b, float* y, float* tmp,
                       const float* const* post_src) {
  /* An empty batch: y is empty too, and oneDNN refuses zero dims. */
  if (nb <= 0) return 0;
  dn_state* s = (dn_state*)c->m->dn;
  pthread_mutex_lock(&s->mu);
  dn_conv_entry* e = s->conv[slot];
  while (e && e->nb != nb) e = e->next;
  if (!e && (e = dn_conv_create(s, k, nb, w)) != NULL) {
    e->next = s->conv[slot];
    s->conv[slot] = e;
  }
  pthread_mutex_unlock(&s->mu);
  if (!e) return -1;
  dnnl_exec_arg_t own[DN_MAX_ARGS], rown[2] = {{DNNL_ARG_FROM, NULL}, {DNNL_ARG_TO, NULL}};
  dnnl_exec_arg_t* args = e->args;
  dnnl_exec_arg_t* rargs = e->rargs;
  int nargs = e->nargs, rc = -1;
  dnnl_stream_t stream = s->stream;
  void* scratch = e->scratch;
  if (!c->exclusive) {
    stream = NULL;
    scratch = NULL;
    args = own;
    nargs = 0;
    DN_CHECK(dnnl_stream_create(&stream, s->eng, dnnl_stream_default_flags), "stream");
    if (e->scratch_bytes && !(scratch = dn_alloc(e->scratch_bytes))) {
      set_error(HONE_AOT_OUT_OF_MEMORY, "node '%s' (Conv): out of memory for a scratchpad",
                k->node);
      goto fail;
    }
    if (dn_make_args(s->eng, e, k, nb, own, &nargs) != 0) goto fail;
    if (e->reo) {
      rargs = rown;
      DN_CHECK(dnnl_memory_create(&rown[0].memory, &e->conv_dst_md, s->eng, DNNL_MEMORY_NONE),
               "memory");
      DN_CHECK(dnnl_memory_create(&rown[1].memory, &e->dst_md, s->eng, DNNL_MEMORY_NONE), "memory");
    }
  }
  {
    int post = 0;
    for (int i = 0; i < nargs; ++i) {
      void* h = NULL;
      switch (args[i].arg) {
        case DNNL_ARG_SRC:
          h = (void*)x;
          break;
        case DNNL_ARG_WEIGHTS:
          h = e->wei ? e->wei : (void*)w;
          break;
        case DNNL_ARG_DST:
          h = e->reo ? (void*)tmp : (void*)y;
          break;
        case DNNL_ARG_BIAS:
          h = (void*)b;
          break;
        case DNNL_ARG_SCRATCHPAD:
          h = scratch;
          break;
        default:
          h = (void*)post_src[post++];
          break;
      }
      DN_CHECK(dnnl_memory_set_data_handle(args[i].memory, h), "binding memory");
    }
  }
  DN_CHECK(dnnl_primitive_execute(e->prim, stream, nargs, args), "execution");
  if (e->reo) {
    DN_CHECK(dnnl_memory_set_data_handle(rargs[0].memory, tmp), "binding memory");
    DN_CHECK(dnnl_memory_set_data_handle(rargs[1].memory, y), "binding memory");
    DN_CHECK(dnnl_primitive_execute(e->reo, stream, 2, rargs), "reorder to nhwc");
  }
  DN_CHECK(dnnl_stream_wait(stream), "execution");
  rc = 0;
fail:
  if (!c->exclusive) {
    dn_free_args(own, nargs);
    dn_free_args(rown, 2);
    if (scratch) free(scratch);
    if (stream) dnnl_stream_destroy(stream);
  }
  return rc;
}
#undef DN_CHECK
