//! For `cargo test` only: the unit tests run without a VM, in an executable
//! where the runtime's `enif_*` functions do not exist, yet the loader
//! binds every one the crate refers to at start-up. These stand-ins let it
//! start; a test that reached one would abort. A test binary that stops
//! with "undefined symbol: enif_..." needs that name added here.

macro_rules! no_vm {
    ($($name:ident)*) => {
        $(
            #[no_mangle]
            extern "C" fn $name() {
                panic!(concat!(stringify!($name), " called in a unit test, without a VM"));
            }
        )*
    };
}

no_vm! {
    enif_alloc_env enif_alloc_resource enif_binary_to_term enif_compare enif_free_env enif_get_atom
    enif_get_double enif_get_int enif_get_list_cell enif_get_long enif_get_map_size
    enif_get_resource enif_make_resource enif_open_resource_type enif_release_resource
    enif_get_tuple enif_get_ulong enif_inspect_binary enif_is_empty_list enif_is_exception
    enif_make_atom_len enif_make_badarg enif_make_copy enif_make_list_from_array
    enif_make_map_from_arrays enif_make_map_put enif_make_new_binary enif_make_new_map
    enif_make_tuple_from_array enif_make_ulong enif_map_iterator_create
    enif_map_iterator_destroy enif_map_iterator_get_pair enif_map_iterator_next
    enif_map_iterator_prev enif_raise_exception enif_schedule_nif enif_snprintf
    enif_term_type enif_is_atom enif_get_atom_length enif_make_sub_binary enif_get_uint
    enif_is_pid enif_is_identical enif_is_ref enif_make_ref enif_make_int64 enif_make_list_cell
    enif_get_int64 enif_get_uint64
}
