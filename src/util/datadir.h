/* datadir.h — where the bundled data (advisory database, fault catalog,
 * rubric) lives: $VIGIL_DATA, else data/ beside the source tree the binary
 * was built from, else the installed /usr/local/share/vigil. */
#ifndef VG_DATADIR_H
#define VG_DATADIR_H

const char *vg_data_dir(void);
/* malloc'd "<data dir>/<name>". */
char *vg_data_path(const char *name);

#endif
