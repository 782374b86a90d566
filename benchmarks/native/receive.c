/* The receive ceiling of the benchmarks: a consumer in C on Apache Qpid Proton's proactor, no
 * Python and no JMS layer. It receives WARMUP + COUNT messages from ADDRESS with a credit window
 * of WINDOW (refilled at half, like a prefetch), decodes each one (pn_message_decode) and checks
 * its body is a binary of BODY_SIZE bytes, accepts and settles it, and prints one JSON line for
 * the COUNT messages after the warm-up: {"count": .., "seconds": .., "cpu_s": ..}. Exit status 0
 * only when every message arrived and decoded.
 *
 *     receive HOST PORT ADDRESS WARMUP COUNT WINDOW BODY_SIZE  < (user line, password line)
 *
 * The user name and password come on standard input, never on the command line (where every
 * process on the machine could read them).
 * Built and run by benchmarks/native_receiver.py (cc ... -lqpid-proton).
 */
#include <proton/connection.h>
#include <proton/condition.h>
#include <proton/delivery.h>
#include <proton/link.h>
#include <proton/message.h>
#include <proton/proactor.h>
#include <proton/sasl.h>
#include <proton/session.h>
#include <proton/transport.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *address;
static char user[256], password[256];
static int warmup, count, window, received, failed;
static long body_size;
static double started_s, started_cpu_s;
static pn_message_t *message;
static char *buffer;
static size_t capacity;

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* The timed part starts here. */
static void start_clock(void) {
  started_s = seconds(CLOCK_MONOTONIC);
  started_cpu_s = seconds(CLOCK_PROCESS_CPUTIME_ID);
}

static void check(const char *what, pn_condition_t *cond) {
  if (pn_condition_is_set(cond)) {
    fprintf(stderr, "receive: %s: %s: %s\n", what, pn_condition_get_name(cond),
            pn_condition_get_description(cond));
    failed = 1;
  }
}

/* The peer closed an endpoint: say why (if it said), and close the connection. */
static void closed_by_peer(pn_event_t *event, const char *what, pn_condition_t *cond) {
  check(what, cond);
  pn_connection_close(pn_event_connection(event));
}

static void open_receiver(pn_connection_t *connection) {
  pn_connection_set_container(connection, "jmspy-benchmark-native-receive");
  pn_connection_set_user(connection, user);
  pn_connection_set_password(connection, password);
  pn_connection_open(connection);
  pn_session_t *session = pn_session(connection);
  pn_session_open(session);
  pn_link_t *link = pn_receiver(session, "native-receive");
  pn_terminus_set_address(pn_link_source(link), address);
  pn_link_open(link);
  pn_link_flow(link, window);
}

/* One complete delivery: decoded, its body checked, accepted and settled. 0 on a failure. */
static int take(pn_delivery_t *delivery) {
  pn_link_t *link = pn_delivery_link(delivery);
  size_t size = pn_delivery_pending(delivery);
  if (size > capacity) {
    capacity = size;
    buffer = realloc(buffer, capacity);
  }
  ssize_t got = pn_link_recv(link, buffer, size);
  pn_message_clear(message);
  if (got < 0 || pn_message_decode(message, buffer, (size_t)got) != 0) {
    fprintf(stderr, "receive: message %d did not decode\n", received + 1);
    return 0;
  }
  pn_data_t *body = pn_message_body(message);
  pn_data_rewind(body);
  pn_data_next(body);
  size_t body_bytes = pn_data_get_binary(body).size;
  if ((long)body_bytes != body_size) {
    fprintf(stderr, "receive: message %d has a body of %zu bytes, expected %ld\n",
            received + 1, body_bytes, body_size);
    return 0;
  }
  pn_delivery_update(delivery, PN_ACCEPTED);
  pn_delivery_settle(delivery);
  if (pn_link_credit(link) < window / 2) pn_link_flow(link, window - pn_link_credit(link));
  if (++received == warmup) start_clock();
  if (received == warmup + count) {
    printf("{\"count\": %d, \"seconds\": %.6f, \"cpu_s\": %.6f}\n", count,
           seconds(CLOCK_MONOTONIC) - started_s,
           seconds(CLOCK_PROCESS_CPUTIME_ID) - started_cpu_s);
    pn_connection_close(pn_session_connection(pn_link_session(link)));
  }
  return 1;
}

/* 0 when the run is over (done or failed). */
static int handle(pn_event_t *event) {
  switch (pn_event_type(event)) {
  case PN_CONNECTION_INIT:
    open_receiver(pn_event_connection(event));
    break;
  case PN_CONNECTION_BOUND: {
    pn_sasl_t *sasl = pn_sasl(pn_event_transport(event));
    pn_sasl_set_allow_insecure_mechs(sasl, true); /* the benchmark's broker is on 127.0.0.1 */
    pn_sasl_allowed_mechs(sasl, "PLAIN");
  } break;
  case PN_DELIVERY: {
    pn_delivery_t *delivery = pn_event_delivery(event);
    if (pn_delivery_readable(delivery) && !pn_delivery_partial(delivery) && !take(delivery))
      failed = 1;
  } break;
  case PN_TRANSPORT_CLOSED:
    check("transport", pn_transport_condition(pn_event_transport(event)));
    break;
  case PN_CONNECTION_REMOTE_CLOSE:
    closed_by_peer(event, "connection", pn_connection_remote_condition(pn_event_connection(event)));
    break;
  case PN_SESSION_REMOTE_CLOSE:
    closed_by_peer(event, "session", pn_session_remote_condition(pn_event_session(event)));
    break;
  case PN_LINK_REMOTE_CLOSE:
    closed_by_peer(event, "link", pn_link_remote_condition(pn_event_link(event)));
    break;
  case PN_PROACTOR_INACTIVE:
    return 0;
  default:
    break;
  }
  return !failed;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: receive HOST PORT ADDRESS WARMUP COUNT WINDOW BODY_SIZE"
                    " < (user line, password line)\n");
    return 2;
  }
  address = argv[3];
  warmup = atoi(argv[4]);
  count = atoi(argv[5]);
  window = atoi(argv[6]);
  body_size = atol(argv[7]);
  if (!fgets(user, sizeof user, stdin) || !fgets(password, sizeof password, stdin)) {
    fprintf(stderr, "receive: expected a user line and a password line on standard input\n");
    return 2;
  }
  user[strcspn(user, "\n")] = 0;
  password[strcspn(password, "\n")] = 0;
  message = pn_message();
  pn_proactor_t *proactor = pn_proactor();
  char addr[PN_MAX_ADDR];
  pn_proactor_addr(addr, sizeof addr, argv[1], argv[2]);
  pn_proactor_connect2(proactor, NULL, NULL, addr);
  if (warmup == 0) start_clock(); /* no warm-up: timed from the connection on */
  for (int going = 1; going;) {
    pn_event_batch_t *events = pn_proactor_wait(proactor);
    for (pn_event_t *e = pn_event_batch_next(events); e && going; e = pn_event_batch_next(events))
      going = handle(e);
    pn_proactor_done(proactor, events);
  }
  pn_proactor_free(proactor);
  pn_message_free(message);
  free(buffer);
  return failed || received < warmup + count;
}
