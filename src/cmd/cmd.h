/* cmd.h — the subcommands: each is `int cmd_NAME(int argc, char **argv)` in
 * src/cmd/NAME.c, listed in the table in src/main.c.  argv[0] is the
 * subcommand's name; the return value is the process exit code
 * (0 healthy, 1 findings/unhealthy, 2 usage or input error). */
#ifndef VG_CMD_H
#define VG_CMD_H

int cmd_advisories(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_bmc(int argc, char **argv);
int cmd_burnin(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_reset_gpu(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_drill(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_trainer(int argc, char **argv);
int cmd_launch(int argc, char **argv);

#endif
