#include "datasets/hdf5_ids.hpp"

#include "common/error.hpp"

namespace strata {

namespace {

// The innermost message on HDF5's error stack.
herr_t collect_error(unsigned, const H5E_error2_t* e, void* out) {
  auto* text = static_cast<std::string*>(out);
  if (e->desc != nullptr && *e->desc != '\0') *text = e->desc;
  return 0;
}

}  // namespace

void throw_hdf5(const std::string& what) {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &detail);
  H5Eclear2(H5E_DEFAULT);
  throw_runtime(what + (detail.empty() ? std::string() : ": " + detail));
}

hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw_hdf5(what);
  return id;
}

void check_status(herr_t rc, const std::string& what) {
  if (rc < 0) throw_hdf5(what);
}

void quiet_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

hid_t hdf5_memory_type(ElemType t) {
  switch (t) {
    case ElemType::u8: return H5T_NATIVE_UINT8;
    case ElemType::i32: return H5T_NATIVE_INT32;
    case ElemType::i64: return H5T_NATIVE_INT64;
    case ElemType::u64: return H5T_NATIVE_UINT64;
    case ElemType::f32: return H5T_NATIVE_FLOAT;
    case ElemType::f64: return H5T_NATIVE_DOUBLE;
    case ElemType::u16: return H5T_NATIVE_UINT16;
  }
  return H5T_NATIVE_UINT8;
}

hid_t hdf5_file_type(ElemType t) {
  switch (t) {
    case ElemType::u8: return H5T_STD_U8LE;
    case ElemType::i32: return H5T_STD_I32LE;
    case ElemType::i64: return H5T_STD_I64LE;
    case ElemType::u64: return H5T_STD_U64LE;
    case ElemType::f32: return H5T_IEEE_F32LE;
    case ElemType::f64: return H5T_IEEE_F64LE;
    case ElemType::u16: return H5T_STD_U16LE;
  }
  return H5T_STD_U8LE;
}

}  // namespace strata
