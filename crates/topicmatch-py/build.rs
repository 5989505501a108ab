//! The `Py_GIL_DISABLED` cfg (a free-threaded CPython), for code whose unsafe parts differ
//! between the two builds (`rows::unfilled_list`).

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
