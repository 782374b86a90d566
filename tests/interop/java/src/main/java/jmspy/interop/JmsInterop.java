package jmspy.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageProducer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.StreamMessage;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.PrintWriter;
import java.io.Serializable;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * A command-line Qpid JMS client for the jmspy interop tests.
 *
 * <p>Usage: {@code java -jar jms-interop.jar COMMAND < request.json}. The request is one JSON
 * object on stdin; the result is one JSON object on stdout. Exit status 0 on success; on any
 * failure, 1 with {@code {"error": class, "message": text, "stack": trace}} on stdout.
 *
 * <p>Commands:
 *
 * <ul>
 *   <li>{@code send}: sends {@code messages} (specs, see {@link #build}) to {@code destination}
 *       and returns for each the JMSMessageID, JMSTimestamp, JMSExpiration and JMSDeliveryTime
 *       the sender saw (and, for Java-serialized ObjectMessages, the serialized bytes).
 *   <li>{@code receive}: receives up to {@code count} messages from {@code destination} (each
 *       receive waits {@code timeoutMs}), optionally with a {@code selector}, in {@code ackMode}
 *       auto/client/dups_ok/transacted. {@code rollback}: {@code "only"} receives, rolls back and
 *       closes; {@code "first"} receives, rolls back, receives again and commits. Returns every
 *       message with all headers, typed properties and a typed body.
 *   <li>{@code durable-subscribe} / {@code durable-resume}: the same operation, with a
 *       {@code clientId} and {@code subscription} on a {@code topic}: creates (or reattaches to)
 *       the durable subscription, receives up to {@code count}, closes; {@code unsubscribe:
 *       true} then removes the subscription. {@code shared: true} uses a shared durable
 *       subscription (the client id is then optional).
 *   <li>{@code reply}: answers requests from {@code destination} on their JMSReplyTo.
 *   <li>{@code request}: sends a request with a temporary JMSReplyTo and waits for the reply.
 * </ul>
 *
 * <p>Common request fields: {@code url}, {@code user}, {@code password}; destinations are
 * {@code {"kind": "queue"|"topic", "name": ...}}. Typed values are {@code {"type": t, "value": v}}
 * with t one of boolean, byte, short, int, long, float, double, string, char, bytes (base64).
 */
public final class JmsInterop {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JmsInterop() {}

    public static void main(String[] args) {
        int status = 0;
        JsonNode result;
        try {
            if (args.length != 1) {
                throw new IllegalArgumentException(
                        "usage: JmsInterop send|receive|durable-subscribe|durable-resume|reply|request"
                                + " < request.json");
            }
            JsonNode request = MAPPER.readTree(System.in);
            if (request == null || !request.isObject()) {
                throw new IllegalArgumentException("stdin must hold one JSON object");
            }
            switch (args[0]) {
                case "send":
                    result = send(request);
                    break;
                case "receive":
                    result = receive(request);
                    break;
                case "durable-subscribe":
                case "durable-resume":
                    result = durable(request);
                    break;
                case "reply":
                    result = reply(request);
                    break;
                case "request":
                    result = sendRequest(request);
                    break;
                default:
                    throw new IllegalArgumentException("unknown command " + args[0]);
            }
        } catch (Throwable t) {
            status = 1;
            ObjectNode error = NODES.objectNode();
            error.put("error", t.getClass().getName());
            error.put("message", String.valueOf(t.getMessage()));
            StringWriter trace = new StringWriter();
            t.printStackTrace(new PrintWriter(trace));
            error.put("stack", trace.toString());
            result = error;
        }
        try {
            System.out.write(MAPPER.writeValueAsBytes(result));
            System.out.println();
            System.out.flush();
        } catch (IOException e) {
            status = 2;
        }
        // Qpid JMS may leave non-daemon threads behind a failed connection; do not wait for them.
        System.exit(status);
    }

    // ---- connections and destinations --------------------------------------------------------

    private static Connection connect(JsonNode request, String clientId) throws JMSException {
        JmsConnectionFactory factory =
                new JmsConnectionFactory(
                        text(request, "user"), text(request, "password"), need(request, "url").asText());
        if (clientId != null) {
            factory.setClientID(clientId);
        }
        return factory.createConnection();
    }

    private static Destination destination(Session session, JsonNode spec) throws JMSException {
        String kind = need(spec, "kind").asText();
        String name = need(spec, "name").asText();
        switch (kind) {
            case "queue":
                return session.createQueue(name);
            case "topic":
                return session.createTopic(name);
            default:
                throw new IllegalArgumentException("destination kind must be queue or topic: " + kind);
        }
    }

    private static JsonNode describe(Destination destination) throws JMSException {
        if (destination == null) {
            return NODES.nullNode();
        }
        ObjectNode node = NODES.objectNode();
        if (destination instanceof TemporaryQueue) {
            node.put("kind", "temp-queue");
            node.put("name", ((Queue) destination).getQueueName());
        } else if (destination instanceof TemporaryTopic) {
            node.put("kind", "temp-topic");
            node.put("name", ((Topic) destination).getTopicName());
        } else if (destination instanceof Queue) {
            node.put("kind", "queue");
            node.put("name", ((Queue) destination).getQueueName());
        } else if (destination instanceof Topic) {
            node.put("kind", "topic");
            node.put("name", ((Topic) destination).getTopicName());
        } else {
            node.put("kind", destination.getClass().getName());
            node.put("name", destination.toString());
        }
        return node;
    }

    // ---- send ---------------------------------------------------------------------------------

    private static JsonNode send(JsonNode request) throws Exception {
        boolean transacted = request.path("transacted").asBoolean(false);
        ObjectNode result = NODES.objectNode();
        ArrayNode sent = result.putArray("sent");
        try (Connection connection = connect(request, null)) {
            Session session =
                    connection.createSession(
                            transacted, transacted ? Session.SESSION_TRANSACTED : Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer =
                    session.createProducer(destination(session, need(request, "destination")));
            for (JsonNode spec : need(request, "messages")) {
                Message message = build(session, spec);
                int mode = deliveryMode(spec.path("deliveryMode"));
                int priority = spec.path("priority").asInt(Message.DEFAULT_PRIORITY);
                long ttl = spec.path("timeToLive").asLong(Message.DEFAULT_TIME_TO_LIVE);
                producer.setDeliveryDelay(spec.path("deliveryDelay").asLong(0));
                producer.send(message, mode, priority, ttl);
                ObjectNode out = sent.addObject();
                out.put("messageId", message.getJMSMessageID());
                out.put("timestamp", message.getJMSTimestamp());
                out.put("expiration", message.getJMSExpiration());
                out.put("deliveryTime", message.getJMSDeliveryTime());
                out.put("deliveryMode", message.getJMSDeliveryMode());
                out.put("priority", message.getJMSPriority());
                if (message instanceof ObjectMessage && !spec.path("typedEncoding").asBoolean(false)) {
                    Serializable object = ((ObjectMessage) message).getObject();
                    if (object != null) {
                        out.put("serialized", base64(javaSerialize(object)));
                    }
                }
            }
            if (transacted) {
                if (request.path("rollback").asBoolean(false)) {
                    session.rollback();
                } else {
                    session.commit();
                }
            }
        }
        return result;
    }

    private static int deliveryMode(JsonNode node) {
        if (node.isMissingNode() || node.isNull()) {
            return DeliveryMode.PERSISTENT;
        }
        if (node.isInt()) {
            return node.asInt();
        }
        switch (node.asText()) {
            case "PERSISTENT":
                return DeliveryMode.PERSISTENT;
            case "NON_PERSISTENT":
                return DeliveryMode.NON_PERSISTENT;
            default:
                throw new IllegalArgumentException("deliveryMode: " + node);
        }
    }

    /**
     * A message from its spec: {@code type} (message, text, bytes, map, stream, object),
     * {@code body} (text: string; bytes: base64; map: name to typed value; stream: list of typed
     * values; object: {@code {"class": "java.lang.String", "value": s}} or
     * {@code {"class": "java.util.HashMap", "value": {name: typed value}}}), {@code
     * typedEncoding} (ObjectMessage: JMS_AMQP_TYPED_ENCODING), {@code correlationId} or {@code
     * correlationIdBytes} (base64), {@code jmsType}, {@code replyTo}, {@code groupId}, {@code
     * groupSeq} and {@code properties} (list of {@code {"name", "type", "value"}}).
     */
    private static Message build(Session session, JsonNode spec) throws Exception {
        String type = spec.path("type").asText("text");
        JsonNode body = spec.path("body");
        boolean hasBody = !body.isMissingNode() && !body.isNull();
        Message message;
        switch (type) {
            case "message":
                message = session.createMessage();
                break;
            case "text":
                message = session.createTextMessage(hasBody ? body.asText() : null);
                break;
            case "bytes": {
                BytesMessage bytes = session.createBytesMessage();
                if (hasBody) {
                    bytes.writeBytes(Base64.getDecoder().decode(body.asText()));
                }
                message = bytes;
                break;
            }
            case "map": {
                MapMessage map = session.createMapMessage();
                if (hasBody) {
                    Iterator<Map.Entry<String, JsonNode>> fields = body.fields();
                    while (fields.hasNext()) {
                        Map.Entry<String, JsonNode> field = fields.next();
                        map.setObject(field.getKey(), typed(field.getValue()));
                    }
                }
                message = map;
                break;
            }
            case "stream": {
                StreamMessage stream = session.createStreamMessage();
                if (hasBody) {
                    for (JsonNode item : body) {
                        stream.writeObject(typed(item));
                    }
                }
                message = stream;
                break;
            }
            case "object": {
                ObjectMessage object = session.createObjectMessage();
                if (spec.path("typedEncoding").asBoolean(false)) {
                    object.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", true);
                }
                if (hasBody) {
                    object.setObject(javaObject(body));
                }
                message = object;
                break;
            }
            default:
                throw new IllegalArgumentException("unknown message type " + type);
        }
        if (spec.hasNonNull("correlationId")) {
            message.setJMSCorrelationID(spec.get("correlationId").asText());
        }
        if (spec.hasNonNull("correlationIdBytes")) {
            message.setJMSCorrelationIDAsBytes(
                    Base64.getDecoder().decode(spec.get("correlationIdBytes").asText()));
        }
        if (spec.hasNonNull("jmsType")) {
            message.setJMSType(spec.get("jmsType").asText());
        }
        if (spec.hasNonNull("replyTo")) {
            message.setJMSReplyTo(destination(session, spec.get("replyTo")));
        }
        if (spec.hasNonNull("groupId")) {
            message.setStringProperty("JMSXGroupID", spec.get("groupId").asText());
        }
        if (spec.hasNonNull("groupSeq")) {
            message.setIntProperty("JMSXGroupSeq", spec.get("groupSeq").asInt());
        }
        for (JsonNode property : spec.path("properties")) {
            setProperty(message, need(property, "name").asText(), property);
        }
        return message;
    }

    private static void setProperty(Message message, String name, JsonNode spec) throws JMSException {
        String type = need(spec, "type").asText();
        JsonNode value = spec.path("value");
        switch (type) {
            case "boolean":
                message.setBooleanProperty(name, value.asBoolean());
                break;
            case "byte":
                message.setByteProperty(name, (byte) value.asInt());
                break;
            case "short":
                message.setShortProperty(name, (short) value.asInt());
                break;
            case "int":
                message.setIntProperty(name, value.asInt());
                break;
            case "long":
                message.setLongProperty(name, value.asLong());
                break;
            case "float":
                message.setFloatProperty(name, (float) value.asDouble());
                break;
            case "double":
                message.setDoubleProperty(name, value.asDouble());
                break;
            case "string":
                message.setStringProperty(name, value.isNull() ? null : value.asText());
                break;
            default:
                throw new IllegalArgumentException("property type " + type + " for " + name);
        }
    }

    /** A Java value from {@code {"type": t, "value": v}}. */
    private static Object typed(JsonNode spec) {
        String type = need(spec, "type").asText();
        JsonNode value = spec.path("value");
        if (value.isNull() || value.isMissingNode()) {
            return null;
        }
        switch (type) {
            case "boolean":
                return value.asBoolean();
            case "byte":
                return (byte) value.asInt();
            case "short":
                return (short) value.asInt();
            case "int":
                return value.asInt();
            case "long":
                return value.asLong();
            case "float":
                return (float) value.asDouble();
            case "double":
                return value.asDouble();
            case "string":
                return value.asText();
            case "char":
                return value.asText().charAt(0);
            case "bytes":
                return Base64.getDecoder().decode(value.asText());
            default:
                throw new IllegalArgumentException("value type " + type);
        }
    }

    private static Serializable javaObject(JsonNode spec) {
        String cls = need(spec, "class").asText();
        JsonNode value = need(spec, "value");
        switch (cls) {
            case "java.lang.String":
                return value.asText();
            case "java.util.HashMap": {
                HashMap<String, Object> map = new HashMap<>();
                Iterator<Map.Entry<String, JsonNode>> fields = value.fields();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    map.put(field.getKey(), typed(field.getValue()));
                }
                return map;
            }
            default:
                throw new IllegalArgumentException("ObjectMessage payload class " + cls);
        }
    }

    /** The bytes Qpid JMS puts in the Data section of a Java-serialized ObjectMessage. */
    private static byte[] javaSerialize(Serializable object) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(object);
            out.flush();
        }
        return bytes.toByteArray();
    }

    // ---- receive ------------------------------------------------------------------------------

    private static JsonNode receive(JsonNode request) throws Exception {
        String ackMode = request.path("ackMode").asText("auto");
        String rollback = request.path("rollback").asText("none");
        boolean transacted = ackMode.equals("transacted") || !rollback.equals("none");
        int mode;
        switch (ackMode) {
            case "auto":
                mode = Session.AUTO_ACKNOWLEDGE;
                break;
            case "client":
                mode = Session.CLIENT_ACKNOWLEDGE;
                break;
            case "dups_ok":
                mode = Session.DUPS_OK_ACKNOWLEDGE;
                break;
            case "transacted":
                mode = Session.SESSION_TRANSACTED;
                break;
            default:
                throw new IllegalArgumentException("ackMode " + ackMode);
        }
        if (transacted) {
            mode = Session.SESSION_TRANSACTED;
        }
        int count = request.path("count").asInt(1);
        long timeout = request.path("timeoutMs").asLong(5000);
        String selector = text(request, "selector");
        ObjectNode result = NODES.objectNode();
        try (Connection connection = connect(request, text(request, "clientId"))) {
            Session session = connection.createSession(transacted, mode);
            MessageConsumer consumer =
                    session.createConsumer(destination(session, need(request, "destination")), selector);
            connection.start();
            List<Received> messages = receiveMany(consumer, count, timeout);
            switch (rollback) {
                case "none":
                    break;
                case "only":
                    result.set("rolledBack", describeAll(messages));
                    session.rollback();
                    messages = Collections.emptyList();
                    break;
                case "first":
                    result.set("rolledBack", describeAll(messages));
                    session.rollback();
                    messages = receiveMany(consumer, count, timeout);
                    break;
                default:
                    throw new IllegalArgumentException("rollback must be none, only or first: " + rollback);
            }
            result.set("messages", describeAll(messages));
            if (mode == Session.SESSION_TRANSACTED && !rollback.equals("only")) {
                session.commit();
            } else if (mode == Session.CLIENT_ACKNOWLEDGE && !messages.isEmpty()) {
                messages.get(messages.size() - 1).message.acknowledge();
            }
        }
        return result;
    }

    private static JsonNode durable(JsonNode request) throws Exception {
        boolean shared = request.path("shared").asBoolean(false);
        String clientId = shared ? text(request, "clientId") : need(request, "clientId").asText();
        String subscription = need(request, "subscription").asText();
        String selector = text(request, "selector");
        int count = request.path("count").asInt(0);
        long timeout = request.path("timeoutMs").asLong(5000);
        ObjectNode result = NODES.objectNode();
        try (Connection connection = connect(request, clientId)) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic(need(request, "topic").asText());
            MessageConsumer consumer =
                    shared
                            ? session.createSharedDurableConsumer(topic, subscription, selector)
                            : session.createDurableConsumer(topic, subscription, selector, false);
            connection.start();
            result.set("messages", describeAll(receiveMany(consumer, count, timeout)));
            consumer.close();
            if (request.path("unsubscribe").asBoolean(false)) {
                session.unsubscribe(subscription);
            }
        }
        return result;
    }

    /** A received message and when it arrived (System.currentTimeMillis()). */
    private static final class Received {
        final Message message;
        final long at;

        Received(Message message, long at) {
            this.message = message;
            this.at = at;
        }
    }

    /**
     * Receives up to {@code count} requests from {@code destination} and answers each with a
     * TextMessage "reply to " + text, sent to its JMSReplyTo with JMSCorrelationID = its
     * JMSMessageID. Returns the requests ({@code messages}) and the replies as sent.
     */
    private static JsonNode reply(JsonNode request) throws Exception {
        int count = request.path("count").asInt(1);
        long timeout = request.path("timeoutMs").asLong(10000);
        ObjectNode result = NODES.objectNode();
        try (Connection connection = connect(request, null)) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer =
                    session.createConsumer(destination(session, need(request, "destination")));
            MessageProducer producer = session.createProducer(null);
            connection.start();
            List<Received> requests = receiveMany(consumer, count, timeout);
            result.set("messages", describeAll(requests));
            ArrayNode replies = result.putArray("replies");
            for (Received received : requests) {
                Message message = received.message;
                TextMessage answer =
                        session.createTextMessage(
                                "reply to "
                                        + (message instanceof TextMessage
                                                ? ((TextMessage) message).getText()
                                                : message.getJMSMessageID()));
                answer.setJMSCorrelationID(message.getJMSMessageID());
                producer.send(message.getJMSReplyTo(), answer);
                ObjectNode sent = replies.addObject();
                sent.put("messageId", answer.getJMSMessageID());
                sent.set("destination", describe(message.getJMSReplyTo()));
            }
        }
        return result;
    }

    /**
     * Creates a temporary queue (or topic, {@code replyKind: "topic"}), sends the {@code
     * message} spec to {@code destination} with JMSReplyTo = that temporary destination, and
     * waits {@code timeoutMs} for one reply on it. Returns {@code sent}, {@code replyTo} and
     * {@code reply} (null when none came).
     */
    private static JsonNode sendRequest(JsonNode request) throws Exception {
        long timeout = request.path("timeoutMs").asLong(20000);
        ObjectNode result = NODES.objectNode();
        try (Connection connection = connect(request, null)) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Destination replyTo =
                    request.path("replyKind").asText("queue").equals("topic")
                            ? session.createTemporaryTopic()
                            : session.createTemporaryQueue();
            MessageConsumer replies = session.createConsumer(replyTo);
            connection.start();
            Message message = build(session, need(request, "message"));
            message.setJMSReplyTo(replyTo);
            MessageProducer producer =
                    session.createProducer(destination(session, need(request, "destination")));
            producer.send(message);
            ObjectNode sent = result.putObject("sent");
            sent.put("messageId", message.getJMSMessageID());
            result.set("replyTo", describe(replyTo));
            Message answer = replies.receive(timeout);
            long at = System.currentTimeMillis();
            if (answer == null) {
                result.putNull("reply");
            } else {
                ObjectNode node = describe(answer);
                node.put("receivedAt", at);
                result.set("reply", node);
            }
        }
        return result;
    }

    private static List<Received> receiveMany(MessageConsumer consumer, int count, long timeout)
            throws JMSException {
        List<Received> messages = new ArrayList<>();
        while (messages.size() < count) {
            Message message = consumer.receive(timeout);
            if (message == null) {
                break;
            }
            messages.add(new Received(message, System.currentTimeMillis()));
        }
        return messages;
    }

    private static ArrayNode describeAll(List<Received> messages) throws JMSException {
        ArrayNode out = NODES.arrayNode();
        for (Received received : messages) {
            ObjectNode node = describe(received.message);
            node.put("receivedAt", received.at);
            out.add(node);
        }
        return out;
    }

    /** Everything a JMS application can see of a received message. */
    private static ObjectNode describe(Message message) throws JMSException {
        ObjectNode node = NODES.objectNode();
        node.put("type", typeName(message));
        node.put("messageId", message.getJMSMessageID());
        node.put("correlationId", message.getJMSCorrelationID());
        try {
            byte[] correlation = message.getJMSCorrelationIDAsBytes();
            node.put("correlationIdBytes", correlation == null ? null : base64(correlation));
        } catch (JMSException notBinary) {
            node.putNull("correlationIdBytes");
        }
        node.put("jmsType", message.getJMSType());
        node.set("replyTo", describe(message.getJMSReplyTo()));
        node.set("destination", describe(message.getJMSDestination()));
        node.put("deliveryMode", message.getJMSDeliveryMode());
        node.put("priority", message.getJMSPriority());
        node.put("timestamp", message.getJMSTimestamp());
        node.put("expiration", message.getJMSExpiration());
        node.put("deliveryTime", message.getJMSDeliveryTime());
        node.put("redelivered", message.getJMSRedelivered());
        node.put("deliveryCount", message.getIntProperty("JMSXDeliveryCount"));
        node.put("groupId", message.getStringProperty("JMSXGroupID"));
        if (message.propertyExists("JMSXGroupSeq")) {
            node.put("groupSeq", message.getIntProperty("JMSXGroupSeq"));
        } else {
            node.putNull("groupSeq");
        }
        ObjectNode properties = node.putObject("properties");
        Enumeration<?> names = message.getPropertyNames();
        while (names.hasMoreElements()) {
            String name = (String) names.nextElement();
            properties.set(name, typedValue(message.getObjectProperty(name)));
        }
        describeBody(message, node);
        return node;
    }

    private static String typeName(Message message) {
        if (message instanceof TextMessage) {
            return "text";
        }
        if (message instanceof BytesMessage) {
            return "bytes";
        }
        if (message instanceof MapMessage) {
            return "map";
        }
        if (message instanceof StreamMessage) {
            return "stream";
        }
        if (message instanceof ObjectMessage) {
            return "object";
        }
        return "message";
    }

    private static void describeBody(Message message, ObjectNode node) throws JMSException {
        if (message instanceof TextMessage) {
            node.put("body", ((TextMessage) message).getText());
        } else if (message instanceof BytesMessage) {
            BytesMessage bytes = (BytesMessage) message;
            byte[] data = new byte[(int) bytes.getBodyLength()];
            bytes.readBytes(data);
            node.put("body", base64(data));
        } else if (message instanceof MapMessage) {
            MapMessage map = (MapMessage) message;
            ObjectNode body = node.putObject("body");
            Enumeration<?> names = map.getMapNames();
            while (names.hasMoreElements()) {
                String name = (String) names.nextElement();
                body.set(name, typedValue(map.getObject(name)));
            }
        } else if (message instanceof StreamMessage) {
            StreamMessage stream = (StreamMessage) message;
            ArrayNode body = node.putArray("body");
            while (true) {
                try {
                    body.add(typedValue(stream.readObject()));
                } catch (MessageEOFException end) {
                    break;
                }
            }
        } else if (message instanceof ObjectMessage) {
            try {
                Serializable object = ((ObjectMessage) message).getObject();
                if (object == null) {
                    node.putNull("body");
                } else {
                    ObjectNode body = node.putObject("body");
                    body.put("class", object.getClass().getName());
                    body.set("value", plainValue(object));
                }
            } catch (JMSException failed) {
                node.putNull("body");
                ObjectNode error = node.putObject("bodyError");
                error.put("class", failed.getClass().getName());
                error.put("message", String.valueOf(failed.getMessage()));
            }
        } else {
            node.putNull("body");
        }
    }

    /** {@code {"type": Java simple class name, "value": JSON value}}; byte[] as base64. */
    private static JsonNode typedValue(Object value) {
        ObjectNode node = NODES.objectNode();
        node.put("type", value == null ? null : value.getClass().getSimpleName());
        node.set("value", plainValue(value));
        return node;
    }

    private static JsonNode plainValue(Object value) {
        if (value == null) {
            return NODES.nullNode();
        }
        if (value instanceof Boolean) {
            return NODES.booleanNode((Boolean) value);
        }
        if (value instanceof Byte || value instanceof Short || value instanceof Integer) {
            return NODES.numberNode(((Number) value).intValue());
        }
        if (value instanceof Long) {
            return NODES.numberNode((Long) value);
        }
        if (value instanceof Float) {
            // The exact value of the float, as a double, so Python sees the same number.
            return NODES.numberNode((double) (Float) value);
        }
        if (value instanceof Double) {
            return NODES.numberNode((Double) value);
        }
        if (value instanceof byte[]) {
            return NODES.textNode(base64((byte[]) value));
        }
        if (value instanceof Map) {
            ObjectNode map = NODES.objectNode();
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                map.set(String.valueOf(entry.getKey()), typedValue(entry.getValue()));
            }
            return map;
        }
        if (value instanceof List) {
            ArrayNode list = NODES.arrayNode();
            for (Object item : (List<?>) value) {
                list.add(typedValue(item));
            }
            return list;
        }
        return NODES.textNode(value.toString());
    }

    // ---- small helpers ------------------------------------------------------------------------

    private static JsonNode need(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw new IllegalArgumentException("missing field " + field);
        }
        return value;
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static String base64(byte[] data) {
        return Base64.getEncoder().encodeToString(data);
    }
}
