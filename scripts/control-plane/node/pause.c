// The pod sandbox's process: holds the pod's namespaces, reaps zombies, exits on SIGINT or SIGTERM.
// The same contract as registry.k8s.io/pause, which cannot be pulled here (no registry is reachable).
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig) { _exit(128 + sig); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {.sa_handler = quit};
  struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}
