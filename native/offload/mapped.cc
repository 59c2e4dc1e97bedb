// Tensor memory in a memory-mapped file (FSDP's offload; ZeRO-Infinity's idea with the kernel as the
// pager). A file is opened once per offload directory; each region of it is mapped MAP_SHARED on its
// own and handed to JavaScript as a SharedArrayBuffer, so the fused kernels and the comm worker use
// it like any tensor memory. Dirty pages go back to the file, never to swap, and the kernel may evict
// them under memory pressure; mappedRelease drops a range from this process at once (madvise).
// TypeScript decides offsets, sizes and when to release (src/tensor/mapped.ts); this file only maps.
// These regions are not the arena's: they appear in none of its counters.
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <v8.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/napi_register.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

namespace rt {
namespace {

// One open file. JavaScript's handle holds one reference and every live region one more, so the
// descriptor outlives a close() while tensors still map the file (their pages stay valid).
struct File {
  int fd;
  std::atomic<int> refs{1};
  void Unref() {
    if (refs.fetch_sub(1) == 1) {
      close(fd);
      delete this;
    }
  }
};

// What JavaScript's handle (an external) points at: its own reference to the file, dropped by
// mappedClose or, failing that, by the handle's finalizer. It lives exactly as long as the handle,
// so a closed handle never reads the File: once close() has dropped the reference, the last region
// to die deletes the File while the handle may live on. (When the handle pointed at the File
// itself, its finalizer read and decremented freed memory: a heap corruption that crashed V8 at
// exit in a test process about one run in three, caught under AddressSanitizer.)
struct FileHandle {
  File* file;  // nullptr once closed
};

struct Region {
  File* file;
  void* base;
  size_t length;
  off_t offset;
};

// Live regions by base address, so that a release can start the writeback of its file range.
std::mutex regions_mu;
std::map<uintptr_t, Region*> regions;

size_t PageSize() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}

// Runs when V8 finds the last handle to the region dead, in whichever thread: the mapping goes, and
// the file's blocks with it (a hole), so a dropped tensor's disk space comes back.
void RegionDeleter(void*, size_t, void* hint) {
  Region* r = static_cast<Region*>(hint);
  {
    std::lock_guard<std::mutex> lock(regions_mu);
    regions.erase(reinterpret_cast<uintptr_t>(r->base));
  }
  munmap(r->base, r->length);
  fallocate(r->file->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, r->offset, off_t(r->length));
  r->file->Unref();
  delete r;
}

napi_value Throw(napi_env env, const std::string& message) {
  napi_throw_error(env, nullptr, message.c_str());
  return nullptr;
}

std::string StringArg(napi_env env, napi_value v) {
  size_t n = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &n) != napi_ok) return std::string();
  std::string s(n, '\0');
  napi_get_value_string_utf8(env, v, &s[0], n + 1, &n);
  return s;
}

double NumberArg(napi_env env, napi_value v) {
  double d = -1;
  napi_get_value_double(env, v, &d);
  return d;
}

FileHandle* HandleArg(napi_env env, napi_value v) {
  void* data = nullptr;
  if (napi_get_value_external(env, v, &data) != napi_ok) return nullptr;
  return static_cast<FileHandle*>(data);
}

// The open file behind a handle, or nullptr if it is closed (or not a handle).
File* FileArg(napi_env env, napi_value v) {
  FileHandle* h = HandleArg(env, v);
  return h ? h->file : nullptr;
}

void FinalizeHandle(napi_env, void* data, void*) {
  FileHandle* h = static_cast<FileHandle*>(data);
  if (h->file) h->file->Unref();
  delete h;
}

// mappedOpen(path) -> handle. Creates the file (it must not exist), owner-only.
napi_value MappedOpenFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  const std::string path = argc > 0 ? StringArg(env, argv[0]) : std::string();
  if (path.empty()) return Throw(env, "mappedOpen: expected a file path");
  const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return Throw(env, "mappedOpen: cannot create " + path + ": " + strerror(errno));
  FileHandle* h = new FileHandle{new File{fd}};
  napi_value handle;
  napi_create_external(env, h, FinalizeHandle, nullptr, &handle);
  return handle;
}

// mappedRegion(handle, offset, byteLength) -> SharedArrayBuffer over [offset, offset + byteLength)
// of the file, which grows to hold it. The offset must be page-aligned; unwritten pages read as 0.
napi_value MappedRegionFn(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  File* f = argc > 0 ? FileArg(env, argv[0]) : nullptr;
  if (!f) return Throw(env, "mappedRegion: the file is closed (or not a mapped file handle)");
  const double offset = argc > 1 ? NumberArg(env, argv[1]) : -1;
  const double bytes = argc > 2 ? NumberArg(env, argv[2]) : -1;
  if (!(offset >= 0) || !(bytes > 0) || offset + bytes > 9.0e15 || size_t(offset) % PageSize() != 0) {
    return Throw(env, "mappedRegion: expected a page-aligned offset >= 0 and a byte length > 0");
  }
  const off_t end = off_t(offset + bytes);
  struct stat st;
  if (fstat(f->fd, &st) != 0) return Throw(env, std::string("mappedRegion: fstat failed: ") + strerror(errno));
  if (st.st_size < end && ftruncate(f->fd, end) != 0) return Throw(env, std::string("mappedRegion: cannot grow the offload file: ") + strerror(errno));
  void* base = mmap(nullptr, size_t(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, off_t(offset));
  if (base == MAP_FAILED) return Throw(env, std::string("mappedRegion: mmap failed: ") + strerror(errno));
  f->refs.fetch_add(1);
  Region* r = new Region{f, base, size_t(bytes), off_t(offset)};
  {
    std::lock_guard<std::mutex> lock(regions_mu);
    regions[reinterpret_cast<uintptr_t>(base)] = r;
  }
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  std::shared_ptr<v8::BackingStore> store = v8::SharedArrayBuffer::NewBackingStore(base, size_t(bytes), RegionDeleter, r);
  v8::Local<v8::SharedArrayBuffer> sab = v8::SharedArrayBuffer::New(isolate, std::move(store));
  return reinterpret_cast<napi_value>(*sab);
}

// The page-aligned part of a typed array's bytes: [*begin, *end).
bool PagesOf(napi_env env, napi_value v, char** begin, char** end) {
  napi_typedarray_type type;
  size_t length;
  void* ptr;
  napi_value ab;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, &length, &ptr, &ab, &offset) != napi_ok) return false;
  size_t es = 1;
  if (type == napi_int16_array || type == napi_uint16_array) es = 2;
  else if (type == napi_int32_array || type == napi_uint32_array || type == napi_float32_array) es = 4;
  else if (type == napi_float64_array || type == napi_bigint64_array || type == napi_biguint64_array) es = 8;
  const uintptr_t page = PageSize();
  const uintptr_t from = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t to = from + length * es;
  *begin = reinterpret_cast<char*>((from + page - 1) & ~(page - 1));
  *end = reinterpret_cast<char*>(to & ~(page - 1));
  return true;
}

// mappedRelease(typedArray, pageOut) -> bytes. Drops the whole pages of the array's range from this
// process (MADV_DONTNEED: dirty pages stay in the page cache, to be written back; the next touch
// faults them in again). With pageOut the kernel also writes them out and reclaims them
// (MADV_PAGEOUT), so they hold no memory at all until read again.
napi_value MappedReleaseFn(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  char* begin = nullptr;
  char* end = nullptr;
  if (argc < 1 || !PagesOf(env, argv[0], &begin, &end)) return Throw(env, "mappedRelease: expected a typed array over a mapped region");
  bool pageOut = false;
  if (argc > 1) napi_get_value_bool(env, argv[1], &pageOut);
  double released = 0;
  if (end > begin) {
    if (pageOut) {
      // Reclaim skips dirty file pages: start their writeback first (it runs on its own), and
      // MADV_PAGEOUT marks them to be evicted once it is done.
      std::lock_guard<std::mutex> lock(regions_mu);
      auto it = regions.upper_bound(reinterpret_cast<uintptr_t>(begin));
      if (it != regions.begin()) {
        Region* r = (--it)->second;
        const uintptr_t base = reinterpret_cast<uintptr_t>(r->base);
        if (reinterpret_cast<uintptr_t>(end) <= base + r->length) {
          sync_file_range(r->file->fd, r->offset + off_t(reinterpret_cast<uintptr_t>(begin) - base), off_t(end - begin), SYNC_FILE_RANGE_WRITE);
        }
      }
      madvise(begin, size_t(end - begin), MADV_PAGEOUT);
    }
    if (madvise(begin, size_t(end - begin), MADV_DONTNEED) == 0) released = double(end - begin);
  }
  napi_value out;
  napi_create_double(env, released, &out);
  return out;
}

// mappedPopulate(typedArray, write): faults the array's pages in with one call (MADV_POPULATE_*),
// ready for writing when `write`, instead of one fault per page as a kernel walks the array.
// Returns false where the kernel lacks it (before Linux 5.14); the pages then fault in on use.
napi_value MappedPopulateFn(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  napi_typedarray_type type;
  size_t length;
  void* ptr;
  napi_value ab;
  size_t offset;
  if (argc < 1 || napi_get_typedarray_info(env, argv[0], &type, &length, &ptr, &ab, &offset) != napi_ok) return Throw(env, "mappedPopulate: expected a typed array over a mapped region");
  bool write = false;
  if (argc > 1) napi_get_value_bool(env, argv[1], &write);
  size_t es = 1;
  if (type == napi_int16_array || type == napi_uint16_array) es = 2;
  else if (type == napi_int32_array || type == napi_uint32_array || type == napi_float32_array) es = 4;
  else if (type == napi_float64_array || type == napi_bigint64_array || type == napi_biguint64_array) es = 8;
  // Whole pages around the array (a view's partial pages are part of its region's mapping).
  const uintptr_t page = PageSize();
  char* from = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(ptr) & ~(page - 1));
  char* to = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(ptr) + length * es + page - 1) & ~(page - 1));
  bool ok = false;
  if (length > 0) ok = madvise(from, size_t(to - from), write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0;
  napi_value out;
  napi_get_boolean(env, ok, &out);
  return out;
}

// mappedResident(typedArray) -> bytes of its whole pages that are in memory (mincore).
napi_value MappedResidentFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  char* begin = nullptr;
  char* end = nullptr;
  if (argc < 1 || !PagesOf(env, argv[0], &begin, &end)) return Throw(env, "mappedResident: expected a typed array over a mapped region");
  double resident = 0;
  if (end > begin) {
    const size_t page = PageSize();
    std::vector<unsigned char> vec(size_t(end - begin) / page);
    if (mincore(begin, size_t(end - begin), vec.data()) == 0) {
      for (unsigned char c : vec) resident += (c & 1) ? double(page) : 0;
    }
  }
  napi_value out;
  napi_create_double(env, resident, &out);
  return out;
}

// mappedClose(handle): this handle's reference goes; the descriptor closes with the last region.
napi_value MappedCloseFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  FileHandle* h = argc > 0 ? HandleArg(env, argv[0]) : nullptr;
  if (h && h->file) {
    h->file->Unref();
    h->file = nullptr;
  }
  return nullptr;
}

// mappedInfo(dir) -> [pageSize, isTmpfs]: a directory on tmpfs would keep the "offloaded" bytes in RAM.
napi_value MappedInfoFn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  const std::string dir = argc > 0 ? StringArg(env, argv[0]) : std::string(".");
  struct statfs fs;
  if (statfs(dir.c_str(), &fs) != 0) return Throw(env, "mappedInfo: cannot read " + dir + ": " + strerror(errno));
  napi_value out, v;
  napi_create_array_with_length(env, 2, &out);
  napi_create_double(env, double(PageSize()), &v);
  napi_set_element(env, out, 0, v);
  napi_get_boolean(env, fs.f_type == TMPFS_MAGIC, &v);
  napi_set_element(env, out, 1, v);
  return out;
}

}  // namespace

void RegisterMapped(napi_env env, napi_value exports) {
  Define(env, exports, "mappedOpen", MappedOpenFn);
  Define(env, exports, "mappedRegion", MappedRegionFn);
  Define(env, exports, "mappedRelease", MappedReleaseFn);
  Define(env, exports, "mappedResident", MappedResidentFn);
  Define(env, exports, "mappedPopulate", MappedPopulateFn);
  Define(env, exports, "mappedClose", MappedCloseFn);
  Define(env, exports, "mappedInfo", MappedInfoFn);
}

}  // namespace rt
