#include "datasets/hdf5_types.hpp"

namespace strata {

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
