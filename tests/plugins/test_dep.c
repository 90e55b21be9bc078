/* SPDX-License-Identifier: Apache-2.0 */
/* The dependency that testmissingdep cannot find at run time. */
__attribute__((visibility("default"))) int anydev_test_dep_value(void) { return 1; }
