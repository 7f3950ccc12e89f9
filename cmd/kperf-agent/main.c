/* placeholder replaced by the agent work */
int main(void)
{
    return 0;
}
