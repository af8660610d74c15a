/* fake_nvml.c — placeholder replaced by the fake NVML library (see tests/fake_nvml/README). */
int nvmlInit_v2(void);
int nvmlInit_v2(void) { return 0; }
