// Reading N-API arguments with the C API: one napi_get_typedarray_info per array and one call per
// number, nothing allocated. TypeScript (src/backend/cpu/) checks shapes and bounds before calling
// in; here every array is still checked to be a typed array of an expected kind, so a wrong call
// throws instead of reading through a bad pointer.
#pragma once
#include <node_api.h>

#include <cstdint>
#include <string>

#include "dtype.h"

namespace rt {

struct Array {
  void* data = nullptr;
  size_t length = 0;
  int dtype = kInvalidDType;  // DType of the storage (Uint16Array is bfloat16, Uint8Array bool)
  template <class T>
  T* as() const { return static_cast<T*>(data); }
};

class Args {
 public:
  static constexpr size_t kMax = 16;

  Args(napi_env env, napi_callback_info info) : env_(env) {
    argc_ = kMax;
    if (napi_get_cb_info(env, info, &argc_, argv_, nullptr, nullptr) != napi_ok) fail("cannot read arguments");
  }

  bool ok() const { return ok_; }
  napi_env env() const { return env_; }

  // A typed array, or (allow_null) null/undefined giving an Array with data == nullptr.
  Array array(size_t i, bool allow_null = false) {
    Array a;
    if (!ok_) return a;
    if (i >= argc_) {
      fail("missing a typed-array argument");
      return a;
    }
    if (allow_null) {
      napi_valuetype t;
      napi_typeof(env_, argv_[i], &t);
      if (t == napi_null || t == napi_undefined) return a;
    }
    napi_typedarray_type type;
    napi_value buffer;
    size_t byte_offset;
    if (napi_get_typedarray_info(env_, argv_[i], &type, &a.length, &a.data, &buffer, &byte_offset) != napi_ok) {
      fail("an argument that must be a typed array is not one");
      return a;
    }
    switch (type) {
      case napi_float32_array: a.dtype = kFloat32; break;
      case napi_float64_array: a.dtype = kFloat64; break;
      case napi_int32_array: a.dtype = kInt32; break;
      case napi_uint16_array: a.dtype = kBFloat16; break;
      case napi_uint8_array: a.dtype = kBool; break;
      default: fail("unsupported typed-array type");
    }
    return a;
  }

  // A typed array that must have the given dtype (or, with allow_null, be null).
  Array array_of(size_t i, int dtype, bool allow_null = false) {
    Array a = array(i, allow_null);
    if (ok_ && a.data && a.dtype != dtype) fail("typed arrays of mismatched dtypes");
    return a;
  }

  double number(size_t i) {
    double v = 0;
    if (ok_ && (i >= argc_ || napi_get_value_double(env_, argv_[i], &v) != napi_ok)) fail("an argument must be a number");
    return v;
  }
  int64_t integer(size_t i) { return int64_t(number(i)); }
  bool boolean(size_t i) {
    bool v = false;
    if (ok_ && (i >= argc_ || napi_get_value_bool(env_, argv_[i], &v) != napi_ok)) fail("an argument must be a boolean");
    return v;
  }

  // Throws a TypeError naming the native function; callers return nullptr once !ok().
  void fail(const char* what) {
    if (!ok_) return;
    ok_ = false;
    napi_throw_type_error(env_, nullptr, (std::string("ringtorch native kernel: ") + what).c_str());
  }

  napi_value undefined() const {
    napi_value u;
    napi_get_undefined(env_, &u);
    return u;
  }

 private:
  napi_env env_;
  napi_value argv_[kMax];
  size_t argc_ = 0;
  bool ok_ = true;
};

}  // namespace rt
