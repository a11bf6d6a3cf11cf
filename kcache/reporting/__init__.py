"""What kcache shows people: progress lines, JUnit files, diagrams and generated docs pages."""
