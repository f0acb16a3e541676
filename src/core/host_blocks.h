// Large host blocks for tensor storage (core-internal; Tensor::allocate is
// the one caller).
//
//   size_t cap = 0;
//   void* p = large_block_take(bytes, &cap);   // zero-filled, >= bytes; nullptr: out of memory
//   ...
//   large_block_give(p, cap);                   // back to the cache, or unmapped
//
// A model's intermediates at a large batch are tens to hundreds of MB each,
// allocated and freed once per op. Through malloc each is a fresh mapping, so
// every run pays a page fault per 4 KiB and the kernel's zeroing of it: the
// reference spent more time faulting than computing on vit_b_16 at batch 32
// (a transformer with [32, 788, 128] activations, 2 threads: 41.8 s of system
// time against 40.0 s of user time over two f64 runs). Here a block of
// `large_block_min()` bytes or more is an anonymous mapping (fresh mappings
// read as zeros without a memset; transparent huge pages asked for where
// the kernel leaves that to the program), and a freed block waits in a
// bounded cache for the next request of its size class, zeroed again with one
// memset when taken. ONNX Runtime's CPU arena serves the same purpose.
//
// The cache holds at most HONE_HOST_CACHE_MB MiB (default: an eighth of the
// machine's memory, at most 8 GiB; 0 turns the cache off); the oldest blocks
// are unmapped first.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <vector>

namespace hone::detail {

/// Requests of this many bytes or more are large blocks.
size_t large_block_min();

/// The capacity (size class) of the block that serves `bytes`.
size_t large_block_capacity(size_t bytes);

/// A block of at least `bytes` (>= large_block_min()), aligned to 4 KiB,
/// zero-filled unless `zero` is false (a reused block then holds old bytes);
/// its capacity in *capacity. nullptr when the memory cannot be had even
/// after emptying the cache.
void* large_block_take(size_t bytes, size_t* capacity, bool zero = true);

/// Returns a block from large_block_take() with its capacity.
void large_block_give(void* p, size_t capacity) noexcept;

/// Unmaps every cached block; returns the bytes released.
size_t large_block_trim() noexcept;

/// Bytes now held in the cache (for tests and logs).
size_t large_block_cached_bytes() noexcept;

/// An allocator for large temporary arrays: requests of large_block_min()
/// bytes or more are large blocks, smaller ones operator new's.
template <class T>
struct BlockAllocator {
  using value_type = T;
  BlockAllocator() = default;
  template <class U>
  BlockAllocator(const BlockAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < large_block_min()) return static_cast<T*>(::operator new(bytes));
    size_t cap = 0;
    void* p = large_block_take(bytes, &cap, false);  // the vector initializes its elements
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < large_block_min())
      ::operator delete(p);
    else
      large_block_give(p, large_block_capacity(bytes));
  }
  friend bool operator==(const BlockAllocator&, const BlockAllocator&) { return true; }
};

}  // namespace hone::detail

namespace hone {

/// A std::vector whose large buffers come from the block cache: for the
/// big temporaries of kernels (the reference's f64 copies of activations).
template <class T>
using HostVector = std::vector<T, detail::BlockAllocator<T>>;

}  // namespace hone
